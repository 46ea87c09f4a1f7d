/** The demo on DuckDB in this process: `npm start`. */
import { createDemoDatabase } from "./dataset.js"
import { ConnectionPool, duckDbDriver } from "./duckdb.js"
import { createDb } from "./sql.js"
import { duckDbSqlExecutor } from "./sqlExecutor.js"

/**
 * Connections for concurrent requests. One DuckDB connection runs one query at a time; with four,
 * a 4 ms query no longer waits behind 80 ms ones (measured p50: 0.2–1 s on one, 20–40 ms on four).
 */
const POOL_SIZE = 4

export const serveDemo = async (rows: number): Promise<void> => {
  // The server's modules (Effect, queryserve) take about as long to load as DuckDB takes to generate
  // the data on its own threads: load them meanwhile.
  const [demo, { launchDemo }] = await Promise.all([createDemoDatabase({ rows }), import("./launch.js")])
  const pool = await ConnectionPool.open(demo.instance, POOL_SIZE)
  await launchDemo({
    label: "DuckDB, in process",
    db: createDb(duckDbDriver(pool)),
    sql: duckDbSqlExecutor(pool),
    close: async () => {
      pool.closeSync()
      await demo.close()
    }
  })
}
