/**
 * The Postgres example for real: a Postgres server started for this test (or DATABASE_URL), the
 * demo data copied into it, and the demo API served over `pg`, checked against DuckDB.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, raw } from "../../examples/analytics/sql.js"
import { POSTGRES_ENDPOINTS, postgresDriver, postgresTarget } from "../../examples/postgres/postgres.js"
import { TENANT_IDS } from "../../examples/analytics/dataset.js"
import { type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "./support/crossCheck.js"
import { itRefusesDaysSomeEngineCannotHold } from "./support/dayRange.js"
import { itExportsAFullYear, itPagesLikeTheExport, startedExport } from "./support/exports.js"
import { PLACEHOLDER_VALUE, STANDARD_PLACEHOLDER_CASES } from "./support/placeholderCases.js"
import { expectOnlyScopedReads, readsThroughEveryKeySpelling, tenantsReadWithRawOr } from "./support/scopeEscapes.js"
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
    const recordingQueries = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (object, property, receiver) =>
          property === "query"
            ? (config: pg.QueryConfig) => {
              sent.push(config.text)
              return (object as pg.PoolClient).query(config)
            }
            : Reflect.get(object, property, receiver)
      })
    // The driver runs each statement on a client it checks out of the pool.
    const recording = new Proxy(pool, {
      get: (target, property, receiver) =>
        property === "connect" ? async () => recordingQueries(await target.connect()) : Reflect.get(target, property, receiver)
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

  it("reads a db.with() key's CTE however the body spells it, or refuses the key: Postgres folds unquoted names to lower case", async () => {
    const [{ n }] = (await pool.query("SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'acme'")).rows
    expectOnlyScopedReads(await readsThroughEveryKeySpelling(createDb(postgresDriver(pool)), "acme"), n)
  })

  it("keeps a raw() condition with OR inside the tenant condition", async () => {
    const db = createDb(postgresDriver(pool))
    for (const tenant of TENANT_IDS) expect(await tenantsReadWithRawOr(db, tenant)).toEqual([tenant])
  })

  itRefusesDaysSomeEngineCannotHold(() => check)

  itPagesLikeTheExport(() => check.api.baseUrl, 20)

  itExportsAFullYear(() => ({ baseUrl: check.api.baseUrl, db: createDb(postgresDriver(pool)) }))

  /** Other backends of this test's database in a transaction or running a statement. */
  const busyBackends = async (): Promise<Array<{ state: string; query: string }>> =>
    (await pool.query(
      `SELECT state, query FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'`
    )).rows

  it("reads the export through a cursor, and an export ended mid-stream closes it: no backend is left in its transaction", async () => {
    const rows = await startedExport(createDb(postgresDriver(pool)))
    expect(await busyBackends()).toEqual([expect.objectContaining({ state: "idle in transaction", query: expect.stringMatching(/^FETCH \d+ FROM queryserve_export$/) })])
    await rows.return()
    expect(await busyBackends()).toEqual([])
    expect(pool.idleCount).toBe(pool.totalCount)
  })

  it("an export whose signal aborts mid-stream fails with the signal's reason and leaves no backend busy", async () => {
    const request = new AbortController()
    const rows = await startedExport(createDb(postgresDriver(pool)), request.signal)
    // Read on: the rows the first FETCH gave, then the next FETCH, which the abort stops.
    const reading = (async () => {
      for await (const _ of rows) {}
    })()
    request.abort(new Error("client left"))
    await expect(reading).rejects.toThrow("client left")
    const until = Date.now() + 2_000
    while ((await busyBackends()).length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await busyBackends()).toEqual([])
  })

  itAnswersLikeDuckDb(POSTGRES_ENDPOINTS, () => check)
})
