/**
 * `npm start`: builds the demo dataset and serves the analytics API on it, with DuckDB in this
 * process, or with `DEMO_ENGINE=clickhouse` with chDB, the ClickHouse engine in this process,
 * loaded with the same generated rows. Environment: PORT, HOST (default localhost:4000),
 * DEMO_ROWS (order rows, default 1,200,000), DEMO_ENGINE (duckdb, the default, or clickhouse).
 */
import { DEFAULT_ORDER_ROWS, orderRowsFromEnv } from "./dataset.js"
import { exitIfPortInUse } from "./launch.js"

const ENGINES = {
  duckdb: () => import("./duckdbDemo.js"),
  clickhouse: () => import("../clickhouse/embeddedDemo.js")
} as const

const engine = process.env.DEMO_ENGINE || "duckdb"
if (!Object.hasOwn(ENGINES, engine)) {
  console.error(`[demo] DEMO_ENGINE must be one of ${Object.keys(ENGINES).join(", ")}, got ${engine}`)
  process.exit(1)
}
await exitIfPortInUse()
const { serveDemo } = await ENGINES[engine as keyof typeof ENGINES]()
await serveDemo(orderRowsFromEnv(DEFAULT_ORDER_ROWS))
