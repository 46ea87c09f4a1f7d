/**
 * The demo's big answers over DuckDB: `ordersExport` streams every order of a full year from
 * DuckDB's result chunks, and a client that leaves mid-stream ends the query and frees the
 * connection; `ordersPage` walks the same rows a page at a time.
 */
import type { ServeQueryEvent } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAnalyticsApi } from "../../examples/analytics/api.js"
import { createDemoDatabase, type DemoDatabase } from "../../examples/analytics/dataset.js"
import { ConnectionPool, duckDbDriver } from "../../examples/analytics/duckdb.js"
import { createDb, type Db } from "../../examples/analytics/sql.js"
import { TENANT_KEYS } from "./support/crossCheck.js"
import { FULL_YEAR, itExportsAFullYear, itPagesLikeTheExport, observedStreams, startedExport, tallyCsv } from "./support/exports.js"

/** Enough that a tenant's year (about 150,000 rows, 9 MB of CSV) outlasts the sockets' buffers. */
const ROWS = 300_000
/** How soon the query must have ended after the client left: the contract's 100 ms, with room for a loaded machine. */
const LEAVE_BOUND_MS = 1_000

let demo: DemoDatabase
let pool: ConnectionPool
let db: Db
let observed: ReturnType<typeof observedStreams>
const events: Array<ServeQueryEvent> = []
let baseUrl: string
let stop: () => Promise<void>

beforeAll(async () => {
  demo = await createDemoDatabase({ rows: ROWS, log: () => {} })
  // One connection: a stream that did not hand it back would block every later request.
  pool = new ConnectionPool([await demo.instance.connect()])
  db = createDb(duckDbDriver(pool))
  observed = observedStreams(duckDbDriver(pool))
  const api = createAnalyticsApi(createDb(observed.driver), { queryLogging: (event) => void events.push(event) })
  const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true })
  baseUrl = `${server.url}${api.basePath}`
  stop = async () => {
    const stopped = server.stop()
    server.server?.closeAllConnections()
    await stopped
    await api.dispose()
  }
}, 60_000)

afterAll(async () => {
  await stop?.()
  pool?.closeSync()
  await demo?.close()
})

const get = (path: string, key: string, signal?: AbortSignal) => fetch(`${baseUrl}/${path}`, { headers: { "x-api-key": key }, signal })

const eventually = async <A>(probe: () => A | undefined, ms: number): Promise<A> => {
  const until = performance.now() + ms
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (performance.now() > until) throw new Error(`not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe("ordersExport over DuckDB", () => {
  itExportsAFullYear(() => ({ baseUrl, db }))

  it("a client that leaves mid-stream ends the query within the bound, and the one connection serves the next request", async () => {
    observed.ends.length = 0
    events.length = 0
    const client = new AbortController()
    const response = await get(`ordersExport.csv?${new URLSearchParams(FULL_YEAR)}`, TENANT_KEYS.acme, client.signal)
    const reader = response.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    const left = performance.now()
    client.abort()
    const end = await eventually(() => observed.ends[0], LEAVE_BOUND_MS * 5)
    expect(end.complete).toBe(false)
    expect(end.at - left).toBeLessThan(LEAVE_BOUND_MS)
    const next = await get(`revenueByRegion?${new URLSearchParams(FULL_YEAR)}`, TENANT_KEYS.globex, AbortSignal.timeout(5_000))
    expect(next.status).toBe(200)
    const logged = await eventually(() => events.find((event) => event.endpointKey === "ordersExport" && event.status !== "started"), 5_000)
    expect(logged).toMatchObject({ status: "error", responseStatus: 499 })
  })

  it("an export ended in-process (its return()) leaves the connection free for the next statement", async () => {
    const rows = await startedExport(db)
    await rows.return()
    expect(await db.table("products").select("product_id").limit(1).execute(AbortSignal.timeout(5_000))).toHaveLength(1)
  })

  it("maxRows still bounds an export to the oldest orders", async () => {
    const tally = await tallyCsv(await get(`ordersExport.csv?${new URLSearchParams({ ...FULL_YEAR, maxRows: "7" })}`, TENANT_KEYS.globex))
    expect(tally.orders).toBe(7)
    expect(tally.ascending).toBe(true)
  })
})

describe("ordersPage", () => {
  const WEEK = { from: "2025-03-01", to: "2025-03-07" }

  itPagesLikeTheExport(() => baseUrl, 300)

  it("refuses a limit above 1,000 and a cursor sent with another range", async () => {
    expect((await get(`ordersPage?${new URLSearchParams({ ...WEEK, limit: "1001" })}`, TENANT_KEYS.acme)).status).toBe(400)
    const first = await (await get(`ordersPage?${new URLSearchParams(WEEK)}`, TENANT_KEYS.acme)).json() as { page: { nextCursor: string } }
    const moved = await get(`ordersPage?${new URLSearchParams({ ...WEEK, from: "2025-03-02", cursor: first.page.nextCursor })}`, TENANT_KEYS.acme)
    expect(moved.status).toBe(400)
  })
})
