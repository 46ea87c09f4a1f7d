/**
 * The demo on chDB, the ClickHouse engine in this process: `DEMO_ENGINE=clickhouse npm start`.
 * DuckDB generates the same seeded rows as for `npm start`, and chDB reads them from Parquet
 * files; then the same ten endpoints are served through the ClickHouse driver.
 */
import { copyDemoDataset } from "../analytics/copyDataset.js"
import { createDemoDatabase } from "../analytics/dataset.js"
import { createDb } from "../analytics/sql.js"
import { CHDB_MISSING, type EmbeddedClickHouse, findChdb, openChdb } from "./chdb.js"
import { clickHouseDriver, clickHouseSqlExecutor } from "./clickhouse.js"

/** chDB holding the demo dataset of `rows` order rows, the rows `npm start` serves from DuckDB. */
export const openDemoOnChdb = async (rows: number, log?: (line: string) => void): Promise<EmbeddedClickHouse> => {
  // DuckDB generates on its own threads while chDB's library loads on this one.
  const [demo, clickhouse] = await Promise.all([createDemoDatabase({ rows, log }), openChdb()])
  try {
    await copyDemoDataset(demo.connection, clickhouse.target, { log })
  } finally {
    await demo.close()
  }
  return clickhouse
}

export const serveDemo = async (rows: number): Promise<void> => {
  if (findChdb() === undefined) {
    console.error(`[demo] ${CHDB_MISSING}`)
    process.exit(1)
  }
  const [clickhouse, { launchDemo }] = await Promise.all([openDemoOnChdb(rows), import("../analytics/launch.js")])
  await launchDemo({
    label: `ClickHouse in process: ${clickhouse.version}`,
    db: createDb(clickHouseDriver(clickhouse.executor)),
    sql: clickHouseSqlExecutor(clickhouse.executor),
    close: () => clickhouse.executor.close()
  })
}
