/**
 * The demo API over Postgres: copies the generated demo tables into the schema `queryserve_demo`
 * of DATABASE_URL (replacing them), then serves the same endpoint definitions through `pg`.
 *
 *   DATABASE_URL=postgres://user:password@localhost:5432/db npx tsx examples/postgres/main.ts
 *
 * Environment: DATABASE_URL (required), DEMO_ROWS (order rows, default 200,000), DEMO_LOAD=0 to
 * serve tables already loaded, PORT, HOST.
 */
import pg from "pg"
import { loadDemoDataset } from "../analytics/copyDataset.js"
import { orderRowsFromEnv } from "../analytics/dataset.js"
import { exitIfPortInUse, launchDemo } from "../analytics/launch.js"
import { createDb } from "../analytics/sql.js"
import { POOL_TIMEOUTS, POSTGRES_ENDPOINTS, postgresDriver, postgresExecutor, postgresTarget } from "./postgres.js"

const SCHEMA = "queryserve_demo"

const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error("set DATABASE_URL, e.g. postgres://user:password@localhost:5432/db")
await exitIfPortInUse()
// Every connection reads and writes the demo schema: the database's own tables stay untouched.
const pool = new pg.Pool({ connectionString, max: 4, ...POOL_TIMEOUTS, options: `-c search_path=${SCHEMA}` })
// pg emits errors of idle clients (a restarted server, a dropped connection) on the pool; unheard, they end the process.
pool.on("error", (error) => console.error(`[postgres] idle connection lost: ${error.message}`))
await pool.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`)
if (process.env.DEMO_LOAD !== "0") await loadDemoDataset(postgresTarget(pool), orderRowsFromEnv(200_000))
await launchDemo({
  label: `Postgres, schema ${SCHEMA}`,
  db: createDb(postgresDriver(pool)),
  sql: postgresExecutor(pool),
  endpoints: POSTGRES_ENDPOINTS,
  close: () => pool.end()
})
