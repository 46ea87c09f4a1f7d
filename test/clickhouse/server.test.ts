/**
 * The ClickHouse driver's server executor (`@clickhouse/client`) against a real ClickHouse server,
 * when one answers at CLICKHOUSE_URL: values bound as typed parameters, and the demo API checked
 * against DuckDB. Without a server it skips and says why; engine.test.ts and demo.test.ts run the
 * same SQL on chDB.
 */
import { type ClickHouseClient, createClient } from "@clickhouse/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, raw } from "../../examples/analytics/sql.js"
import { clickHouseDriver, clickHouseTarget, serverExecutor } from "../../examples/clickhouse/clickhouse.js"
import { type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "../demo/support/crossCheck.js"
import { METRIC_CASES } from "../demo/support/references.js"

const ROWS = 20_000
const URL = process.env.CLICKHOUSE_URL ?? "http://127.0.0.1:8123"
const DATABASE = "queryserve_demo_test"
const credentials = { url: URL, username: process.env.CLICKHOUSE_USER ?? "default", password: process.env.CLICKHOUSE_PASSWORD ?? "" }

const reachable = async (): Promise<boolean> => {
  const probe = createClient({ ...credentials, request_timeout: 2_000 })
  try {
    return (await probe.ping()).success
  } finally {
    await probe.close()
  }
}

const skipReason = (await reachable()) ? undefined : `no ClickHouse server answered at ${URL} (set CLICKHOUSE_URL)`
if (skipReason !== undefined) console.log(`[skip] ClickHouse server tests: ${skipReason}`)

describe.skipIf(skipReason !== undefined)("the demo API over a ClickHouse server", () => {
  let client: ClickHouseClient
  let check: CrossCheck

  beforeAll(async () => {
    const setup = createClient(credentials)
    await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${DATABASE}` })
    await setup.close()
    client = createClient({ ...credentials, database: DATABASE })
    check = await prepareCrossCheck(clickHouseTarget(client), createDb(clickHouseDriver(serverExecutor(client))), undefined, ROWS)
  }, 120_000)

  afterAll(async () => {
    await check?.close()
    await client?.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
    await client?.close()
  })

  it("binds hostile text as a typed parameter: it matches nothing and changes nothing", async () => {
    const db = createDb(clickHouseDriver(serverExecutor(client)))
    for (const attack of ["acme' OR '1'='1", "acme\\' OR 1=1 --"]) {
      expect(await db.table("orders").where("tenant_id", "eq", attack).execute()).toEqual([])
    }
    expect(await db.table("orders").select(raw("count(*) AS n")).execute()).toEqual([{ n: ROWS }])
  })

  itAnswersLikeDuckDb([...new Set(Object.values(METRIC_CASES).map((metric) => metric.endpoint))], () => check)
})
