/**
 * The demo's drivers as dataset executors, each on its engine with the demo data: DuckDB,
 * Postgres, chDB, and `@clickhouse/client` against a ClickHouse engine (the chDB HTTP front).
 * Parameterised statements answer rows keyed by their aliases, with the same JSON values on every
 * engine; an abort stops the statement; a database error reaches queryserve's classification.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TENANT_IDS } from "../../examples/analytics/dataset.js"
import type { SqlExecutor, SqlStatement } from "queryserve"
import { postgresExecutor } from "../../examples/postgres/postgres.js"
import { toServeError } from "../../src/domain/errors.js"
import { findChdbForTests } from "../support/chdb.js"
import { eventually } from "../support/eventually.js"
import { freePort } from "../support/freePort.js"
import { findPostgresBinForTests } from "../support/postgresServer.js"
import { settledWithin } from "../support/settledWithin.js"
import { type EngineName, type Engines, openEngines } from "./support/engines.js"

const ROWS = 10_000
const ENGINES: ReadonlyArray<EngineName> = ["duckdb", "postgres", "chdb", "clickhouse"]

const postgresBin = findPostgresBinForTests("dataset executors")
const chdb = findChdbForTests("dataset executors")

/** One question, as each dialect writes it: a tenant's orders in a date range, in some regions, over an amount. */
const revenueByRegion = (engine: EngineName, tenant: string, regions: readonly [string, string]): SqlStatement => {
  const values = [tenant, "2025-02-01", "2025-06-30", ...regions, 10] as const
  const select = `SELECT region, count(*) AS orders, sum(amount) AS revenue, min(day) AS "firstDay" FROM orders`
  if (engine === "chdb" || engine === "clickhouse") {
    return {
      sql: `${select} WHERE tenant_id = {p1:String} AND day BETWEEN toDate({p2:String}) AND toDate({p3:String})
            AND region IN ({p4:String}, {p5:String}) AND amount >= {p6:Int64} GROUP BY region ORDER BY region`,
      params: Object.fromEntries(values.map((value, i) => [`p${i + 1}`, value]))
    }
  }
  return {
    sql: `${select} WHERE tenant_id = $1 AND day BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE)
          AND region IN ($4, $5) AND amount >= $6 GROUP BY region ORDER BY region`,
    params: values
  }
}

/** About a second of each engine's time, or more. */
const SLOW: Readonly<Record<EngineName, string>> = {
  duckdb: "SELECT count(*) AS n FROM range(100000) a, range(100000) b WHERE a.range * b.range % 7 = 3",
  postgres: "SELECT pg_sleep(5) AS slept_in_the_executor_test",
  chdb: "SELECT sum(sleepEachRow(0.1)) AS slept FROM numbers(10) SETTINGS max_block_size = 1",
  clickhouse: "SELECT sum(sleepEachRow(0.1)) AS slept FROM numbers(10) SETTINGS max_block_size = 1"
}

const positional = (executor: SqlExecutor): boolean => executor.dialect !== "clickhouse"

const failureOf = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => "resolved", (error: unknown) => error)

describe.skipIf(postgresBin === undefined || chdb === undefined)("the demo's drivers as dataset executors", () => {
  let engines: Engines

  beforeAll(async () => {
    engines = await openEngines(ROWS, postgresBin!)
  }, 120_000)

  afterAll(() => engines?.close())

  it("name their dialect", () => {
    expect(Object.fromEntries(ENGINES.map((engine) => [engine, engines.executors[engine].dialect]))).toEqual({
      duckdb: "duckdb",
      postgres: "postgres",
      chdb: "clickhouse",
      clickhouse: "clickhouse"
    })
  })

  it("answer a parameterised statement (text, dates, a list, a number) with the same rows for every tenant", async () => {
    for (const tenant of TENANT_IDS) {
      const answers = await Promise.all(ENGINES.map((engine) => engines.executors[engine].execute(revenueByRegion(engine, tenant, ["emea", "na"]))))
      const [duckdb] = answers
      expect(duckdb, tenant).toHaveLength(2)
      for (const row of duckdb!) {
        expect(Object.keys(row), tenant).toEqual(["region", "orders", "revenue", "firstDay"])
        expect(row).toMatchObject({ region: expect.any(String), revenue: expect.any(Number), firstDay: expect.stringMatching(/^2025-\d\d-\d\d$/) })
        expect(Number.isInteger(row.orders)).toBe(true)
      }
      answers.forEach((answer, i) => expect(answer, `${ENGINES[i]} for ${tenant}`).toEqual(duckdb))
    }
  })

  it("bind hostile text as a value: it matches nothing", async () => {
    for (const engine of ENGINES) {
      for (const attack of ["acme' OR '1'='1", "acme\\' OR 1=1 --", "acme'); DROP TABLE orders; --"]) {
        expect(await engines.executors[engine].execute(revenueByRegion(engine, attack, ["emea", "na' OR '1'='1"])), engine).toEqual([])
      }
    }
  })

  it("refuse params of the other shape: a record for $n placeholders, an array for {name:Type}", async () => {
    for (const engine of ENGINES) {
      const executor = engines.executors[engine]
      const params = positional(executor) ? { p1: "acme" } : ["acme"]
      expect(await failureOf(executor.execute({ sql: "SELECT 1 AS one", params })), engine).toBeInstanceOf(TypeError)
    }
  })

  describe("an abort", () => {
    for (const engine of ENGINES) {
      it(`${engine}: fails the statement at once with the signal's reason`, async () => {
        const request = new AbortController()
        const running = engines.executors[engine].execute({ sql: SLOW[engine], params: positional(engines.executors[engine]) ? [] : {} }, request.signal)
        await new Promise((resolve) => setTimeout(resolve, 150))
        const reason = new Error("the client left")
        request.abort(reason)
        expect(await settledWithin(running, 500)).toEqual({ error: reason })
      })
    }

    it("postgres: the statement stops running in the server", async () => {
      const sql = "SELECT pg_sleep(5) AS stopped_by_the_abort"
      const request = new AbortController()
      const running = failureOf(engines.executors.postgres.execute({ sql, params: [] }, request.signal))
      const active = async () =>
        (await engines.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query = $1", [sql])).rows[0].n
      await eventually(async () => expect(await active()).toBe(1))
      request.abort(new Error("the client left"))
      await running
      await eventually(async () => expect(await active()).toBe(0), 3000)
    })
  })

  describe("a database error", () => {
    const MISSING_TABLE = "SELECT count(*) AS n FROM no_such_table"
    const ENGINE_TEXT: Readonly<Record<EngineName, RegExp>> = {
      duckdb: /no_such_table does not exist/,
      postgres: /relation "no_such_table" does not exist/,
      chdb: /^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\)/s,
      clickhouse: /no_such_table/
    }

    for (const engine of ENGINES) {
      it(`${engine}: rejects with the engine's error, which queryserve answers as a 500`, async () => {
        const executor = engines.executors[engine]
        const error = await failureOf(executor.execute({ sql: MISSING_TABLE, params: positional(executor) ? [] : {} }))
        expect(error).toBeInstanceOf(Error)
        expect((error as Error).message).toMatch(ENGINE_TEXT[engine])
        expect(toServeError(error)).toMatchObject({ _tag: "InternalError", cause: error })
      })
    }

    it("clickhouse: carries ClickHouse's code and name, as the client reads them", async () => {
      expect(await failureOf(engines.executors.clickhouse.execute({ sql: MISSING_TABLE, params: {} }))).toMatchObject({ code: "60", type: "UNKNOWN_TABLE" })
    })

    it("postgres: a server that is not there is DATABASE_UNREACHABLE (503)", async () => {
      const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` })
      try {
        const error = await failureOf(postgresExecutor(pool).execute({ sql: "SELECT 1 AS one", params: [] }))
        expect(toServeError(error)).toMatchObject({ _tag: "DatabaseUnreachable" })
      } finally {
        await pool.end()
      }
    })
  })
})
