/**
 * The ClickHouse driver on chDB: the JSON value it gives for the types JSON cannot hold exactly,
 * the same as DuckDB's and Postgres' (test/demo/values.test.ts), and what a signal that aborts
 * does. ClickHouse keeps time zones in its column types, not in its values: a DateTime is a
 * timestamp, printed in its column's time zone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, type Db, type SqlDriver, type Statement } from "../../examples/analytics/sql.js"
import { type EmbeddedClickHouse, openChdb } from "../../examples/clickhouse/chdb.js"
import { clickHouseDriver } from "../../examples/clickhouse/clickhouse.js"
import { VALUE_CASES } from "../demo/support/valueCases.js"
import { findChdbForTests } from "../support/chdb.js"

const available = findChdbForTests("ClickHouse driver on chDB: values and cancellation") !== undefined

const CASES = VALUE_CASES.flatMap(({ name, clickhouse, expected }) => (clickhouse === undefined ? [] : [{ name, sql: clickhouse, expected }]))

const statement = (sql: string): Statement => ({ sql, params: [], checks: [] })

/** How `promise` settled within `ms`: `{ value }`, `{ error }`, or "pending". */
const settledWithin = <A>(promise: Promise<A>, ms: number) =>
  Promise.race([
    promise.then((value) => ({ value }), (error: unknown) => ({ error })),
    new Promise((resolve) => setTimeout(resolve, ms)).then(() => "pending" as const)
  ])

let clickhouse: EmbeddedClickHouse
let driver: SqlDriver
let db: Db

beforeAll(async () => {
  if (!available) return
  clickhouse = await openChdb()
  driver = clickHouseDriver(clickhouse.executor)
  db = createDb(driver)
})

afterAll(() => clickhouse?.executor.close())

describe.skipIf(!available)("ClickHouse's values, on chDB", () => {
  it.each(CASES)("$name", async ({ sql, expected }) => {
    expect((await db.with({}, sql).execute())[0]?.v).toEqual(expected)
  })

  it("converts values inside arrays and nullable columns too", async () => {
    const rows = await db
      .with({}, "SELECT [toInt64(9007199254740993), toInt64(1)] AS ids, toNullable(toDecimal64('10.50', 2)) AS amount")
      .execute()
    expect(rows).toEqual([{ ids: ["9007199254740993", 1], amount: 10.5 }])
  })
})

describe.skipIf(!available)("the ClickHouse driver on chDB, given a signal", () => {
  // About a second of the engine's time: chDB runs one parameterized query at a time.
  const SLOW = statement("SELECT sum(sleepEachRow(0.1)) AS slept FROM numbers(10) SETTINGS max_block_size = 1")

  it("queued queries whose signal aborts never run, and fail at once with its reason", async () => {
    await driver.execute(statement("CREATE TABLE ran (request UInt32) ENGINE = Memory"))
    const running = driver.execute(SLOW)
    const requests = Array.from({ length: 5 }, () => new AbortController())
    const queued = requests.map((request, i) => driver.execute(statement(`INSERT INTO ran VALUES (${i})`), request.signal))
    for (const request of requests) request.abort(new Error("the client left"))
    expect(await Promise.all(queued.map((query) => settledWithin(query, 200)))).toEqual(
      requests.map((request) => ({ error: request.signal.reason }))
    )
    await running
    expect(await driver.execute(statement("SELECT count() AS runs FROM ran"))).toEqual([{ runs: 0 }])
  })

  it("a running query whose signal aborts fails at once with its reason", async () => {
    const request = new AbortController()
    const running = driver.execute(SLOW, request.signal)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const reason = new Error("the client left")
    request.abort(reason)
    expect(await settledWithin(running, 200)).toEqual({ error: reason })
  })
})
