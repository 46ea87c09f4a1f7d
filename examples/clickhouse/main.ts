/**
 * The demo API over ClickHouse: copies the generated demo tables into the database
 * `queryserve_demo` (replacing them), then serves the endpoints ClickHouse can run through
 * `@clickhouse/client`.
 *
 *   CLICKHOUSE_URL=http://localhost:8123 npx tsx examples/clickhouse/main.ts
 *
 * Environment: CLICKHOUSE_URL (default http://localhost:8123), CLICKHOUSE_USER, CLICKHOUSE_PASSWORD,
 * DEMO_ROWS (order rows, default 200,000), DEMO_LOAD=0 to serve tables already loaded, PORT, HOST.
 */
import { createClient } from "@clickhouse/client"
import { loadDemoDataset } from "../analytics/copyDataset.js"
import { orderRowsFromEnv } from "../analytics/dataset.js"
import { launchDemo } from "../analytics/launch.js"
import { createDb } from "../analytics/sql.js"
import { CLICKHOUSE_ENDPOINTS, clickHouseDriver, clickHouseTarget } from "./clickhouse.js"

const DATABASE = "queryserve_demo"

const server = {
  url: process.env.CLICKHOUSE_URL ?? "http://localhost:8123",
  username: process.env.CLICKHOUSE_USER ?? "default",
  password: process.env.CLICKHOUSE_PASSWORD ?? ""
}
const setup = createClient(server)
await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${DATABASE}` })
await setup.close()
const client = createClient({ ...server, database: DATABASE })
if (process.env.DEMO_LOAD !== "0") await loadDemoDataset(clickHouseTarget(client), orderRowsFromEnv(200_000))
await launchDemo({
  label: `ClickHouse, database ${DATABASE}`,
  db: createDb(clickHouseDriver(client)),
  endpoints: CLICKHOUSE_ENDPOINTS,
  close: () => client.close()
})
