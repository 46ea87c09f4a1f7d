/**
 * The ClickHouse example: the driver's parameter binding always, and the demo API served over a
 * real ClickHouse server checked against DuckDB when one answers at CLICKHOUSE_URL.
 */
import { type ClickHouseClient, createClient } from "@clickhouse/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb } from "../../examples/analytics/sql.js"
import { CLICKHOUSE_ENDPOINTS, clickHouseDriver, clickHouseTarget } from "../../examples/clickhouse/clickhouse.js"
import { type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "./support/crossCheck.js"

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

describe("the ClickHouse driver", () => {
  it("sends every value as a typed query parameter, never as SQL text", async () => {
    const sent: Array<{ query: string; query_params: unknown }> = []
    const client = {
      query: async (params: { query: string; query_params: unknown }) => {
        sent.push(params)
        return { json: async () => [{ n: 1 }] }
      }
    } as unknown as ClickHouseClient
    const attack = "acme' OR '1'='1"
    const rows = await createDb(clickHouseDriver(client))
      .table("orders")
      .where("tenant_id", "eq", attack)
      .where("quantity", "in", [1, 2.5])
      .limit(3)
      .execute()
    expect(rows).toEqual([{ n: 1 }])
    expect(sent).toMatchObject([{
      query: `SELECT * FROM "orders" WHERE "tenant_id" = {p0:String} AND "quantity" IN ({p1:Int64}, {p2:Float64}) LIMIT {p3:Int64}`,
      query_params: { p0: attack, p1: 1, p2: 2.5, p3: 3 }
    }])
  })
})

describe.skipIf(skipReason !== undefined)("the demo API over ClickHouse", () => {
  let client: ClickHouseClient
  let check: CrossCheck

  beforeAll(async () => {
    const setup = createClient(credentials)
    await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${DATABASE}` })
    await setup.close()
    client = createClient({ ...credentials, database: DATABASE })
    check = await prepareCrossCheck(clickHouseTarget(client), createDb(clickHouseDriver(client)), CLICKHOUSE_ENDPOINTS, ROWS)
  }, 120_000)

  afterAll(async () => {
    await check?.close()
    await client?.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
    await client?.close()
  })

  itAnswersLikeDuckDb(CLICKHOUSE_ENDPOINTS, () => check)
})
