/**
 * The demo API over a ClickHouse server: copies the generated demo tables into the database
 * `queryserve_demo` (replacing them), then serves the ten endpoints through `@clickhouse/client`,
 * with the same definitions and rendered SQL as `DEMO_ENGINE=clickhouse npm start` runs on chDB.
 *
 *   CLICKHOUSE_URL=http://localhost:8123 npx tsx examples/clickhouse/main.ts
 *
 * Environment: CLICKHOUSE_URL (default http://localhost:8123), CLICKHOUSE_USER, CLICKHOUSE_PASSWORD,
 * DEMO_ROWS (order rows, default 200,000), DEMO_LOAD=0 to serve tables already loaded, PORT, HOST.
 */
import { createClient } from "@clickhouse/client"
import { loadDemoDataset } from "../analytics/copyDataset.js"
import { orderRowsFromEnv } from "../analytics/dataset.js"
import { exitIfPortInUse, launchDemo } from "../analytics/launch.js"
import { createDb } from "../analytics/sql.js"
import { clickHouseDriver, clickHouseSqlExecutor, clickHouseTarget, serverExecutor } from "./clickhouse.js"

const DATABASE = "queryserve_demo"

const server = {
  url: process.env.CLICKHOUSE_URL ?? "http://localhost:8123",
  username: process.env.CLICKHOUSE_USER ?? "default",
  password: process.env.CLICKHOUSE_PASSWORD ?? ""
}
await exitIfPortInUse()
const setup = createClient(server)
await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${DATABASE}` })
await setup.close()
const client = createClient({ ...server, database: DATABASE })
if (process.env.DEMO_LOAD !== "0") await loadDemoDataset(clickHouseTarget(client), orderRowsFromEnv(200_000))
const executor = serverExecutor(client)
await launchDemo({
  label: `ClickHouse, database ${DATABASE}`,
  db: createDb(clickHouseDriver(executor)),
  sql: clickHouseSqlExecutor(executor),
  close: () => executor.close()
})
