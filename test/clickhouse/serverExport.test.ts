/**
 * The demo's export through `@clickhouse/client`'s stream, against a ClickHouse engine (chDB behind
 * the test HTTP front of test/support/chdbHttp.ts): a full year of each tenant's orders, counted by
 * the engine, and an export ended mid-stream.
 */
import type { ClickHouseClient } from "@clickhouse/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, type Db } from "../../examples/analytics/sql.js"
import { clickHouseDriver, clickHouseTarget, serverExecutor } from "../../examples/clickhouse/clickhouse.js"
import { type CrossCheck, prepareCrossCheck } from "../demo/support/crossCheck.js"
import { itExportsAFullYear, observedStreams, startedExport } from "../demo/support/exports.js"
import { findChdbForTests } from "../support/chdb.js"
import { type ChdbDatabase, startChdbDatabase } from "../support/chdbDatabase.js"

const ROWS = 20_000
const DATABASE = "queryserve_export_test"

const available = findChdbForTests("the export through @clickhouse/client's stream") !== undefined

describe.skipIf(!available)("the export through @clickhouse/client's stream", () => {
  let chdb: ChdbDatabase
  let client: ClickHouseClient
  let db: Db
  let check: CrossCheck

  beforeAll(async () => {
    chdb = await startChdbDatabase(DATABASE)
    client = chdb.client
    db = createDb(clickHouseDriver(serverExecutor(client)))
    check = await prepareCrossCheck(clickHouseTarget(client), db, ["ordersExport"], ROWS)
  }, 120_000)

  afterAll(async () => {
    await check?.close()
    await chdb?.close()
  })

  itExportsAFullYear(() => ({ baseUrl: check.api.baseUrl, db }))

  it("an export ended mid-stream closes its response at once, and the client answers the next query", async () => {
    const { driver, ends } = observedStreams(clickHouseDriver(serverExecutor(client)))
    const rows = await startedExport(createDb(driver))
    const left = performance.now()
    await rows.return()
    expect(ends).toEqual([expect.objectContaining({ complete: false })])
    // The contract's 100 ms, with room for a loaded machine.
    expect(ends[0]!.at - left).toBeLessThan(1_000)
    expect(await db.table("products").select("product_id").limit(1).execute()).toHaveLength(1)
  })

  it("an export whose signal has aborted fails with its reason and sends nothing", async () => {
    const reason = new Error("client left")
    await expect(startedExport(db, AbortSignal.abort(reason))).rejects.toBe(reason)
  })
})
