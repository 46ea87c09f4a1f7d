/**
 * The Postgres example for real: a Postgres server started for this test (or DATABASE_URL), the
 * demo data copied into it, and the demo API served over `pg`, checked against DuckDB.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, raw } from "../../examples/analytics/sql.js"
import { POSTGRES_ENDPOINTS, postgresDriver, postgresTarget } from "../../examples/postgres/postgres.js"
import { type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "./support/crossCheck.js"
import { PLACEHOLDER_VALUE, STANDARD_PLACEHOLDER_CASES } from "./support/placeholderCases.js"
import { findPostgresBin, type PostgresServer, startPostgres } from "../support/postgresServer.js"

const ROWS = 20_000
// Its own schema, so a DATABASE_URL database keeps its tables.
const SCHEMA = "queryserve_demo_test"

const bin = findPostgresBin()
const skipReason = process.env.DATABASE_URL === undefined && bin === undefined
  ? "no DATABASE_URL and no Postgres server binaries under /usr/lib/postgresql (apt-get install postgresql)"
  : undefined
if (skipReason !== undefined) console.log(`[skip] Postgres example: ${skipReason}`)

describe.skipIf(skipReason !== undefined)("the demo API over Postgres", () => {
  let server: PostgresServer | undefined
  let pool: pg.Pool
  let check: CrossCheck

  beforeAll(async () => {
    server = process.env.DATABASE_URL === undefined ? await startPostgres(bin!) : undefined
    const connectionString = server?.url ?? process.env.DATABASE_URL
    pool = new pg.Pool({ connectionString, max: 4, options: `-c search_path=${SCHEMA}` })
    // An idle pooled client reports the server's shutdown at teardown as an error event; without a
    // listener that event is an uncaught error that fails the run after every test has passed.
    pool.on("error", (error) => console.warn(`[postgres test] idle client: ${error.message}`))
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`)
    check = await prepareCrossCheck(postgresTarget(pool), createDb(postgresDriver(pool)), POSTGRES_ENDPOINTS, ROWS)
  }, 120_000)

  afterAll(async () => {
    await check?.close()
    await pool?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
    await pool?.end()
    await server?.stop()
  })
  it("binds every value as a $n parameter: hostile text matches nothing and changes nothing", async () => {
    const sent: Array<string> = []
    const recording = new Proxy(pool, {
      get: (target, property, receiver) =>
        property === "query"
          ? (config: pg.QueryConfig) => {
            sent.push(config.text)
            return target.query(config)
          }
          : Reflect.get(target, property, receiver)
    })
    const db = createDb(postgresDriver(recording))
    const attack = "acme' OR '1'='1"
    expect(await db.table("orders").where("tenant_id", "eq", attack).where("region", "in", ["na", attack]).execute()).toEqual([])
    expect(sent).toEqual([`SELECT * FROM "orders" WHERE "tenant_id" = $1 AND "region" IN ($2, $3)`])
    const [{ n }] = (await pool.query("SELECT count(*)::int AS n FROM orders")).rows
    expect(n).toBe(ROWS)
  })

  it("renders $n only for the placeholders outside quotes and comments, as Postgres reads them", async () => {
    const db = createDb(postgresDriver(pool))
    for (const [sql, row] of STANDARD_PLACEHOLDER_CASES) {
      expect(await db.with({}, raw(sql, [PLACEHOLDER_VALUE])).execute(), sql).toEqual([row])
    }
  })

  itAnswersLikeDuckDb(POSTGRES_ENDPOINTS, () => check)
})
