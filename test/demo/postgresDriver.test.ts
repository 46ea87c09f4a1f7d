/**
 * The Postgres driver when things go wrong, on a Postgres server started for this file: requests
 * that end before their query cancel it in Postgres, the pool gives up on a slow statement or a
 * busy pool in time, and a server that goes away mid-query is DATABASE_UNREACHABLE, as one that is
 * already down.
 */
import { DatabaseUnreachable, type ServeQueryEvent } from "queryserve"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_API_KEYS } from "../../examples/analytics/api.js"
import type { Statement } from "../../examples/analytics/sql.js"
import { classifyPostgresError, POOL_TIMEOUTS, postgresDriver } from "../../examples/postgres/postgres.js"
import { DEFAULT_REQUEST_TIMEOUT } from "../../src/adapters/deadlines.js"
import { eventually } from "../support/eventually.js"
import { serveDemo } from "./support/serveDemo.js"
import { settledWithin, sleep } from "../support/settledWithin.js"
import { findPostgresBinForTests, type PostgresServer, startPostgres } from "../support/postgresServer.js"

const [ACME_KEY, GLOBEX_KEY] = Object.keys(DEMO_API_KEYS)

const TABLES = [
  "CREATE TABLE orders (tenant_id text, day date, region text, amount numeric(12, 2))",
  "INSERT INTO orders VALUES ('acme', '2025-02-03', 'na', 10.50)",
  "CREATE TABLE events (tenant_id text, day date, step_index integer, step text, session_id text)",
  "INSERT INTO events VALUES ('globex', '2025-02-03', 1, 'view', 's1')",
  "CREATE SEQUENCE waited"
]

const statement = (sql: string): Statement => ({ sql, params: [], checks: [] })

const failureOf = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => "resolved", (error: unknown) => error)

const bin = findPostgresBinForTests("Postgres driver")

describe.skipIf(bin === undefined)("the Postgres driver", () => {
  let server: PostgresServer
  /** Every pool made here, ended at the end. */
  const pools: Array<pg.Pool> = []
  /** A connection of its own, for looking at the server and holding locks. */
  let observer: pg.Client

  const newPool = (config: pg.PoolConfig = {}): pg.Pool => {
    const pool = new pg.Pool({ connectionString: server.url, max: 4, ...POOL_TIMEOUTS, ...config })
    // Connections the server drops (the outage tests) are reported here when idle; unheard, they end the run.
    pool.on("error", () => {})
    pools.push(pool)
    return pool
  }

  /** Whether Postgres still runs `sql` for someone. */
  const running = async (sql: string): Promise<boolean> => {
    const { rows } = await observer.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query = $1", [sql])
    return rows[0].n > 0
  }

  const stopsRunning = (sql: string) =>
    eventually(async () => {
      if (await running(sql)) throw new Error(`Postgres still runs ${sql}`)
    }, 3000)

  const startsRunning = (sql: string) =>
    eventually(async () => {
      if (!(await running(sql))) throw new Error(`Postgres does not run ${sql} yet`)
    }, 3000)

  beforeAll(async () => {
    server = await startPostgres(bin!)
    observer = new pg.Client({ connectionString: server.url })
    observer.on("error", () => {})
    await observer.connect()
    for (const sql of TABLES) await observer.query(sql)
  })

  afterAll(async () => {
    await observer?.end().catch(() => {})
    await Promise.all(pools.map((pool) => pool.end().catch(() => {})))
    await server?.stop()
  })

  /** The demo API over `driver`, logging into `events`. */

  describe("cancellation", () => {
    it("cancels a running statement in Postgres when the signal aborts, failing with the signal's reason", async () => {
      const driver = postgresDriver(newPool())
      const sql = "SELECT pg_sleep(30) AS cancelled_while_running"
      const request = new AbortController()
      const query = driver.execute(statement(sql), request.signal)
      await startsRunning(sql)
      const reason = new Error("the client left")
      request.abort(reason)
      expect(await settledWithin(query, 3000)).toEqual({ error: reason })
      await stopsRunning(sql)
    })

    it("a query waiting for a pooled connection leaves the queue when its signal aborts, and never runs", async () => {
      const driver = postgresDriver(newPool({ max: 1 }))
      const sql = "SELECT pg_sleep(30) AS holding_the_pool"
      const first = new AbortController()
      const second = new AbortController()
      const holding = driver.execute(statement(sql), first.signal)
      await startsRunning(sql)
      const waiting = driver.execute(statement("SELECT nextval('waited')"), second.signal)
      second.abort(new Error("the second client left"))
      expect(await settledWithin(waiting, 500)).toEqual({ error: second.signal.reason })
      first.abort(new Error("the first client left"))
      expect(await settledWithin(holding, 3000)).toEqual({ error: first.signal.reason })
      expect(await driver.execute(statement("SELECT is_called FROM waited"))).toEqual([{ is_called: false }])
    })

    it("abandoned requests on a locked table free the pool: another tenant's endpoint still answers, and they log 499", async () => {
      const events: Array<ServeQueryEvent> = []
      const api = await serveDemo(postgresDriver(newPool()), events)
      await observer.query("BEGIN")
      try {
        await observer.query("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        const abandoned = [1, 2, 3, 4, 5, 6].map((day) =>
          api.call(`revenueByDay?from=2025-02-0${day}&to=2025-03-01`, ACME_KEY!, AbortSignal.timeout(500)).catch(() => "left")
        )
        expect(await Promise.all(abandoned)).toEqual(Array(6).fill("left"))
        const funnel = await api.call("funnel?from=2025-01-01&to=2025-06-30", GLOBEX_KEY!, AbortSignal.timeout(3000))
        expect(funnel.status).toBe(200)
        await eventually(async () => {
          const ended = events.filter((event) => event.endpointKey === "revenueByDay" && event.status === "error")
          expect(ended.map((event) => event.responseStatus)).toEqual(Array(6).fill(499))
        }, 3000)
        const { rows } = await observer.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%FROM "orders"%' AND state = 'active' AND pid <> pg_backend_pid()`
        )
        expect(rows[0].n).toBe(0)
      } finally {
        await observer.query("ROLLBACK")
        await api.stop()
      }
    })
  })

  describe("the pool's timeouts", () => {
    it("end a statement in Postgres before queryserve's default request timeout, and give up on connecting", async () => {
      expect(POOL_TIMEOUTS.statement_timeout).toBeLessThan(DEFAULT_REQUEST_TIMEOUT)
      expect(POOL_TIMEOUTS.connectionTimeoutMillis).toBeGreaterThan(0)
      const { rows } = await newPool().query("SHOW statement_timeout")
      expect(rows).toEqual([{ statement_timeout: `${POOL_TIMEOUTS.statement_timeout / 1000}s` }])
    })

    it("a statement that outlives statement_timeout fails as 504 GATEWAY_TIMEOUT, not a 500", async () => {
      const driver = postgresDriver(newPool({ statement_timeout: 200 }))
      expect(await failureOf(driver.execute(statement("SELECT pg_sleep(5)")))).toMatchObject({ _tag: "GatewayTimeout", timeoutMs: 200 })
    })

    it("no pooled connection free within connectionTimeoutMillis fails as 503 SERVICE_UNAVAILABLE", async () => {
      const pool = newPool({ max: 1, connectionTimeoutMillis: 500 })
      // Opened beforehand: on a busy machine opening one can take longer than the timeout itself.
      await eventually(() => pool.query("SELECT 1"))
      const driver = postgresDriver(pool)
      const holder = new AbortController()
      const holding = failureOf(driver.execute(statement("SELECT pg_sleep(30) AS holding_the_only_connection"), holder.signal))
      await startsRunning("SELECT pg_sleep(30) AS holding_the_only_connection")
      expect(await failureOf(driver.execute(statement("SELECT 1")))).toMatchObject({ _tag: "ServiceUnavailable" })
      holder.abort()
      await holding
    })
  })

  describe("an outage", () => {
    it("classifies the errors of a connection the server ended or never gave as DATABASE_UNREACHABLE", () => {
      const serverError = (code: string) => Object.assign(new pg.DatabaseError("from the server", 0, "error"), { code })
      for (const error of [
        serverError("57P01"), // admin_shutdown
        serverError("57P02"), // crash_shutdown
        serverError("57P03"), // cannot_connect_now
        serverError("08006"), // connection_failure
        serverError("08P01"), // protocol_violation
        new Error("Connection terminated unexpectedly"),
        new Error("Connection terminated due to connection timeout")
      ]) {
        expect(classifyPostgresError(error, 0), error.message).toMatchObject({ _tag: "DatabaseUnreachable", cause: error })
      }
      for (const error of [serverError("42P01"), serverError("22003"), new Error("something else")]) {
        expect(classifyPostgresError(error, 0)).toBe(error)
      }
    })

    it("a backend terminated mid-query (57P01) is DATABASE_UNREACHABLE", async () => {
      const driver = postgresDriver(newPool())
      const sql = "SELECT pg_sleep(30) AS terminated"
      const query = failureOf(driver.execute(statement(sql)))
      await startsRunning(sql)
      await observer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1", [sql])
      expect(await query).toBeInstanceOf(DatabaseUnreachable)
    })

    it("a backend that crashes mid-query is DATABASE_UNREACHABLE, and so are the queries Postgres ends to recover", async () => {
      const driver = postgresDriver(newPool())
      const [crashing, bystander] = ["SELECT pg_sleep(30) AS crashing", "SELECT pg_sleep(30) AS bystander"]
      const queries = [crashing, bystander].map((sql) => failureOf(driver.execute(statement(sql))))
      await startsRunning(crashing)
      await startsRunning(bystander)
      const { rows } = await observer.query("SELECT pid FROM pg_stat_activity WHERE query = $1", [crashing])
      process.kill(rows[0].pid, "SIGKILL")
      const [crashed, ended] = await Promise.all(queries)
      expect(crashed).toMatchObject({ _tag: "DatabaseUnreachable", cause: { message: "Connection terminated unexpectedly" } })
      // Postgres ends the other backends to recover; the bystander may or may not get its 57P02 first.
      expect(ended).toMatchObject({ _tag: "DatabaseUnreachable" })
      // Postgres restarts its backends: the observer's connection went with them.
      observer = await eventually(async () => {
        const client = new pg.Client({ connectionString: server.url })
        client.on("error", () => {})
        await client.connect()
        return client
      }, 20_000)
    })

    it("a request in flight when Postgres shuts down gets 503 DATABASE_UNREACHABLE, as one sent while it is down", async () => {
      const events: Array<ServeQueryEvent> = []
      const api = await serveDemo(postgresDriver(newPool()), events)
      try {
        await observer.query("BEGIN")
        await observer.query("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        const inFlight = api.call("revenueByDay?from=2025-02-01&to=2025-03-01", ACME_KEY!)
        await eventually(async () => expect(events.some((event) => event.status === "started")).toBe(true))
        await sleep(200)
        await server.stop()
        const answers = [await inFlight, await api.call("revenueByDay?from=2025-02-02&to=2025-03-01", ACME_KEY!)]
        for (const answer of answers) {
          expect(answer.status).toBe(503)
          expect(await answer.json()).toMatchObject({ error: { type: "DATABASE_UNREACHABLE" } })
        }
      } finally {
        await api.stop()
      }
    })
  })
})
