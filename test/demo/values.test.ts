/**
 * The JSON value each driver gives for the types JSON cannot hold exactly (64-bit integers,
 * decimals, timestamps, NaN): the same on DuckDB and Postgres as on ClickHouse
 * (test/clickhouse/values.test.ts), whatever the process' or the database session's time zone.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { duckDbDriver } from "../../examples/analytics/duckdb.js"
import { createDb, type Db } from "../../examples/analytics/sql.js"
import { postgresDriver } from "../../examples/postgres/postgres.js"
import { findPostgresBinForTests, type PostgresServer, startPostgres } from "../support/postgresServer.js"
import { VALUE_CASES } from "./support/valueCases.js"

// Not UTC, so that a value read in local time shows. Each test file runs in a process of its own.
const zone = process.env.TZ
process.env.TZ = "America/New_York"
afterAll(() => {
  process.env.TZ = zone
})

const valueOf = async (db: Db, sql: string) => (await db.with({}, sql).execute())[0]?.v

describe("DuckDB's values", () => {
  let instance: DuckDBInstance
  let db: Db

  beforeAll(async () => {
    instance = await DuckDBInstance.create(":memory:")
    db = createDb(duckDbDriver(await instance.connect()))
  })

  afterAll(() => instance?.closeSync())

  it.each(VALUE_CASES)("$name", async ({ standard, expected }) => {
    expect(await valueOf(db, standard)).toEqual(expected)
  })

  // A stream converts by column (the common types without a converter call per value): the same values.
  it.each(VALUE_CASES)("$name, streamed", async ({ standard, expected }) => {
    const rows: Array<unknown> = []
    for await (const row of db.with({}, standard).stream()) rows.push(row.v)
    expect(rows).toEqual([expected])
  })

  it("streams the values a query returns whole, for decimals of every scale, dates, integers and text", async () => {
    const connection = await instance.connect()
    await connection.run(`CREATE TABLE mixed AS SELECT i, CAST(i * 7919 % 1000003 - 500000 AS BIGINT) * 9007199 AS big,
        CAST((i * 7919 % 1000003 - 500000) / 100 AS DECIMAL(12,2)) AS amount,
        CAST((i * 104729 % 999983) / 1e9 AS DECIMAL(15,14)) AS small, CAST(i AS DECIMAL(18,3)) / 7 AS wide,
        DATE '1969-12-25' + CAST(i % 400 AS INTEGER) AS day, CAST(i AS VARCHAR) || ',"x' AS label,
        CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS flag
      FROM range(6000) t(i)`)
    connection.closeSync()
    const query = () => db.with({ m: db.table("mixed").select("i", "big", "amount", "small", "wide", "day", "label", "flag") }, "SELECT * FROM m ORDER BY i")
    const streamed: Array<unknown> = []
    for await (const row of query().stream()) streamed.push(row)
    expect(streamed).toEqual(await query().execute())
    expect(streamed).toHaveLength(6000)
  })
})

const bin = findPostgresBinForTests("Postgres values")

describe.skipIf(bin === undefined)("Postgres' values", () => {
  let server: PostgresServer
  let pool: pg.Pool
  let db: Db

  beforeAll(async () => {
    server = await startPostgres(bin!)
    pool = new pg.Pool({ connectionString: server.url, max: 1, options: "-c TimeZone=America/New_York" })
    pool.on("error", () => {})
    db = createDb(postgresDriver(pool))
  })

  afterAll(async () => {
    await pool?.end()
    await server?.stop()
  })

  it.each(VALUE_CASES)("$name", async ({ standard, expected }) => {
    expect(await valueOf(db, standard)).toEqual(expected)
  })

  // A stream converts by column (the common types without a converter call per value): the same values.
  it.each(VALUE_CASES)("$name, streamed", async ({ standard, expected }) => {
    const rows: Array<unknown> = []
    for await (const row of db.with({}, standard).stream()) rows.push(row.v)
    expect(rows).toEqual([expected])
  })

})
