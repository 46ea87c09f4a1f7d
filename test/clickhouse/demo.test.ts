/**
 * The demo on embedded ClickHouse: the endpoints served over chDB, each called for every
 * tenant and checked against the same API over DuckDB and independent SQL on the same generated
 * rows; and `DEMO_ENGINE=clickhouse npm start` as a user runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_API_KEYS } from "../../examples/analytics/api.js"
import { createDb } from "../../examples/analytics/sql.js"
import { type EmbeddedClickHouse, openChdb } from "../../examples/clickhouse/chdb.js"
import { clickHouseDriver } from "../../examples/clickhouse/clickhouse.js"
import { ADMIN_KEY, type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "../demo/support/crossCheck.js"
import { itRefusesDaysSomeEngineCannotHold } from "../demo/support/dayRange.js"
import { itExportsAFullYear, itPagesLikeTheExport, observedStreams, startedExport } from "../demo/support/exports.js"
import { type DemoProcess, startDemo } from "../demo/support/demoProcess.js"
import { callApi } from "../demo/support/http.js"
import { METRIC_CASES } from "../demo/support/references.js"
import { findChdbForTests } from "../support/chdb.js"

const ROWS = 20_000
/** Pages of a chDB stream, small so that a tenant's year (several thousand orders) takes several. */
const PAGE_ROWS = 1_000
/** The started demo only shows that it starts and serves: the cross-check above compares the rows. */
const STARTED_ROWS = 2_000
const ENDPOINTS = [...new Set(Object.values(METRIC_CASES).map((metric) => metric.endpoint))]

const available = findChdbForTests("the demo on ClickHouse") !== undefined

describe.skipIf(!available)("the demo API over chDB answers as over DuckDB", () => {
  let clickhouse: EmbeddedClickHouse
  let check: CrossCheck

  beforeAll(async () => {
    clickhouse = await openChdb(undefined, { pageRows: PAGE_ROWS })
    check = await prepareCrossCheck(clickhouse.target, createDb(clickHouseDriver(clickhouse.executor)), undefined, ROWS)
  })

  afterAll(async () => {
    await check?.close()
    await clickhouse?.executor.close()
  })

  it("serves all ten endpoints", () => {
    expect(ENDPOINTS).toHaveLength(10)
  })

  itRefusesDaysSomeEngineCannotHold(() => check)

  itPagesLikeTheExport(() => check.api.baseUrl, 20)

  itExportsAFullYear(() => ({ baseUrl: check.api.baseUrl, db: createDb(clickHouseDriver(clickhouse.executor)) }))

  it("an export ended mid-stream asks for no further page, and the session answers the next query", async () => {
    const { driver, ends } = observedStreams(clickHouseDriver(clickhouse.executor))
    const rows = await startedExport(createDb(driver))
    const left = performance.now()
    await rows.return()
    expect(ends).toEqual([{ batches: 1, complete: false, at: expect.any(Number) }])
    // The contract's 100 ms, with room for a loaded machine.
    expect(ends[0]!.at - left).toBeLessThan(1_000)
    expect(await createDb(driver).table("products").select("product_id").limit(1).execute()).toHaveLength(1)
  })

  itAnswersLikeDuckDb(ENDPOINTS, () => check)
})

describe.skipIf(!available)("DEMO_ENGINE=clickhouse npm start", () => {
  let demo: DemoProcess

  beforeAll(async () => {
    demo = await startDemo(STARTED_ROWS, 90_000, { DEMO_ENGINE: "clickhouse" })
  }, 120_000)

  afterAll(() => demo?.stop("SIGKILL"))

  it("prints the demo's banner, naming the engine", () => {
    const output = demo.output()
    expect(output).toMatch(/^\[demo\] orders: 2,000 rows \(\d+\.\ds\)$/m)
    expect(output).toMatch(/^\[copy\] orders: 2,000 rows \(\d+\.\ds\)$/m)
    expect(output).toMatch(/queryserve analytics demo: http:\/\/127\.0\.0\.1:\d+\/api\/analytics \(ClickHouse in process: chDB \d+\.\d+\.\d+, ClickHouse \d+\.\d+/)
    for (const key of Object.keys(DEMO_API_KEYS)) expect(output).toMatch(new RegExp(`^  curl -s -H 'x-api-key: ${key}' '${demo.baseUrl}/\\w+`, "m"))
    expect(demo.readyMs).toBeGreaterThan(0)
  })

  it("answers the printed commands", async () => {
    const commands = [...demo.output().matchAll(/^  curl -s -H 'x-api-key: ([\w-]+)' '(\S+)'$/gm)]
    expect(commands).toHaveLength(5)
    for (const [line, key, url] of commands) {
      const answer = await fetch(url!, { headers: { "x-api-key": key! } })
      expect(answer.status, line).toBe(200)
      expect((await answer.text()).length, line).toBeGreaterThan(10)
    }
  })

  it("serves all eleven endpoints (the ten cross-checked and ordersPage) and the orders dataset, and refuses a tenant key on the admin one", async () => {
    const document = (await callApi(demo.baseUrl, "openapi.json")).json as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths).map((path) => path.slice("/api/analytics/".length)).sort()).toEqual(
      [...ENDPOINTS, "ordersPage", "datasets", "datasets/orders"].sort()
    )
    expect((await callApi(demo.baseUrl, "tenantsOverview", { key: ADMIN_KEY })).status).toBe(200)
    expect((await callApi(demo.baseUrl, "tenantsOverview", { key: "demo-acme-key" })).status).toBe(403)
  })

  it("Ctrl-C (SIGINT) stops the server and closes chDB, exit code 0", async () => {
    expect(await demo.stop("SIGINT")).toBe(0)
    expect(demo.output()).toMatch(/\[demo\] SIGINT: stopping\n\[demo\] stopped\n$/)
  })
})
