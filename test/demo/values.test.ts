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
})
