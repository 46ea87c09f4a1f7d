/**
 * Requests that end before their DuckDB query does (the client left, or the request timeout
 * answered 504) stop that query: a query still waiting for a pooled connection leaves the queue, a
 * running one is interrupted. The request ends as its own abort, never as a 500.
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api"
import type { ServeQueryEvent } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_API_KEYS } from "../../examples/analytics/api.js"
import { ConnectionPool, duckDbDriver } from "../../examples/analytics/duckdb.js"
import type { SqlDriver, Statement } from "../../examples/analytics/sql.js"
import { eventually } from "../support/eventually.js"
import { serveDemo } from "./support/serveDemo.js"
import { settledWithin, sleep } from "../support/settledWithin.js"

const [ACME_KEY, GLOBEX_KEY] = Object.keys(DEMO_API_KEYS)

// 10^12 rows: many minutes of work, so only an interrupt ends a query on it within a test.
const ENDLESS_ORDERS = `CREATE VIEW orders AS
  SELECT 'acme' AS tenant_id, DATE '2025-01-01' + CAST(i % 28 AS INTEGER) AS day, 'na' AS region,
         CAST(i % 100 AS DECIMAL(12, 2)) AS amount
  FROM range(1000000000000) t(i)`

const EVENTS = `CREATE TABLE events AS
  SELECT 'globex' AS tenant_id, DATE '2025-01-02' AS day, 1 AS step_index, 'view' AS step, 's1' AS session_id`

const ENDLESS_QUERY: Statement = { sql: "SELECT sum(amount) AS total FROM orders", params: [], checks: [] }

const statement = (sql: string): Statement => ({ sql, params: [], checks: [] })

let instance: DuckDBInstance
let connection: DuckDBConnection
/** One connection: a query that still runs holds it, and every other waits in the queue. */
let driver: SqlDriver

beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:")
  connection = await instance.connect()
  for (const sql of [ENDLESS_ORDERS, EVENTS, "CREATE TABLE ran (name VARCHAR)"]) await connection.run(sql)
  driver = duckDbDriver(new ConnectionPool([connection]))
})

afterAll(() => {
  connection?.closeSync()
  instance?.closeSync()
})

describe("the DuckDB driver, given a signal", () => {
  it("interrupts a running query when the signal aborts, and fails with the signal's reason", async () => {
    const request = new AbortController()
    const running = driver.execute(ENDLESS_QUERY, request.signal)
    await sleep(200)
    const reason = new Error("the client left")
    request.abort(reason)
    expect(await settledWithin(running, 3000)).toEqual({ error: reason })
  })

  it("drops a query waiting for the connection from the queue when its signal aborts: it never runs", async () => {
    const first = new AbortController()
    const second = new AbortController()
    const running = driver.execute(ENDLESS_QUERY, first.signal)
    const waiting = driver.execute(statement("INSERT INTO ran VALUES ('waiting')"), second.signal)
    second.abort(new Error("the second client left"))
    expect(await settledWithin(waiting, 500)).toEqual({ error: second.signal.reason })
    first.abort(new Error("the first client left"))
    expect(await settledWithin(running, 3000)).toEqual({ error: first.signal.reason })
    expect(await driver.execute(statement("SELECT count(*) AS runs FROM ran"))).toEqual([{ runs: 0 }])
  })

  it("starts nothing for a signal aborted already", async () => {
    const reason = new Error("gone before it started")
    await expect(driver.execute(statement("INSERT INTO ran VALUES ('late')"), AbortSignal.abort(reason))).rejects.toBe(reason)
    expect(await driver.execute(statement("SELECT count(*) AS runs FROM ran"))).toEqual([{ runs: 0 }])
  })
})

describe("the demo API over DuckDB, when a request ends before its query", () => {
  const events: Array<ServeQueryEvent> = []
  const unhandled: Array<unknown> = []
  const recordUnhandled = (reason: unknown) => void unhandled.push(reason)

  beforeAll(() => void process.on("unhandledRejection", recordUnhandled))
  afterAll(() => void process.off("unhandledRejection", recordUnhandled))

  /** The API over the one-connection driver, with `requestTimeout`; calls go to `${base}/name?...`. */
  const serve = (requestTimeout: number) => serveDemo(driver, events, requestTimeout)

  const funnelAnswersWithin = async (call: Awaited<ReturnType<typeof serve>>["call"], ms: number) => {
    const answer = await call("funnel?from=2025-01-01&to=2025-01-31", GLOBEX_KEY!, AbortSignal.timeout(ms))
    return answer.status
  }

  const endOf = (endpoint: string) => events.find((event) => event.endpointKey === endpoint && event.status !== "started")

  it("a client that leaves stops its query: the connection is free at once, and the request is logged as 499, not 500", async () => {
    events.length = 0
    const api = await serve(30_000)
    try {
      const client = new AbortController()
      const abandoned = api.call("revenueByDay?from=2025-01-01&to=2025-01-31", ACME_KEY!, client.signal).catch(() => "left")
      await sleep(300)
      client.abort()
      expect(await abandoned).toBe("left")
      expect(await funnelAnswersWithin(api.call, 3000)).toBe(200)
      const ended = await eventually(async () => endOf("revenueByDay") ?? Promise.reject(new Error("not logged yet")))
      expect(ended).toMatchObject({ status: "error", responseStatus: 499 })
      expect(unhandled).toEqual([])
    } finally {
      await api.stop()
    }
  })

  it("the request timeout's 504 stops the query as well", async () => {
    events.length = 0
    const api = await serve(400)
    try {
      const timedOut = await api.call("revenueByDay?from=2025-01-01&to=2025-01-31", ACME_KEY!)
      expect(timedOut.status).toBe(504)
      expect(await funnelAnswersWithin(api.call, 3000)).toBe(200)
      expect(events.filter((event) => event.responseStatus !== undefined).map((event) => [event.endpointKey, event.responseStatus]))
        .toEqual([["revenueByDay", 504], ["funnel", 200]])
      expect(unhandled).toEqual([])
    } finally {
      await api.stop()
    }
  })
})
