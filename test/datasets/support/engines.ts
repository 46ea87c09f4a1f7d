/**
 * The demo data on every engine a dataset runs on, each behind its SqlExecutor: DuckDB (the
 * generated original), Postgres (a server started for the suite), chDB in this process, and a
 * ClickHouse server as `@clickhouse/client` sees it (the chDB HTTP front, on chDB's data directory).
 */
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from "@clickhouse/client"
import type { DuckDBConnection } from "@duckdb/node-api"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { copyDemoDataset } from "../../../examples/analytics/copyDataset.js"
import { createDemoDatabase, type DemoDatabase } from "../../../examples/analytics/dataset.js"
import { duckDbSqlExecutor } from "../../../examples/analytics/sqlExecutor.js"
import { openChdb } from "../../../examples/clickhouse/chdb.js"
import { clickHouseSqlExecutor, serverExecutor } from "../../../examples/clickhouse/clickhouse.js"
import { postgresExecutor, postgresTarget } from "../../../examples/postgres/postgres.js"
import type { SqlExecutor } from "queryserve"
import { type ChdbHttp, startChdbHttp } from "../../support/chdbHttp.js"
import { startPostgres } from "../../support/postgresServer.js"

export type EngineName = "duckdb" | "postgres" | "chdb" | "clickhouse"

export interface Engines {
  readonly executors: Readonly<Record<EngineName, SqlExecutor>>
  /** The generated original, which the demo's DuckDB API serves. */
  readonly reference: DemoDatabase
  /** For looking at the server beside the executor's pool. */
  readonly pool: pg.Pool
  close(): Promise<void>
}

/** Generates `rows` demo orders and copies them into Postgres (server binaries in `postgresBin`) and chDB. */
export const openEngines = async (rows: number, postgresBin: string): Promise<Engines> => {
  const directory = mkdtempSync(join(tmpdir(), "queryserve-engines-"))
  const [reference, server, chdb] = await Promise.all([createDemoDatabase({ rows, log: () => {} }), startPostgres(postgresBin), openChdb(directory)])
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // An idle client hears the server stop at teardown; unheard, that error would end the run.
  pool.on("error", () => {})
  let front: ChdbHttp | undefined
  let client: ClickHouseClient | undefined
  let connection: DuckDBConnection | undefined
  const close = async (): Promise<void> => {
    connection?.closeSync()
    await client?.close()
    await front?.stop()
    await chdb.executor.close()
    await pool.end()
    await server.stop()
    await reference.close()
    rmSync(directory, { recursive: true, force: true })
  }
  try {
    await copyDemoDataset(reference.connection, postgresTarget(pool), { log: () => {} })
    await copyDemoDataset(reference.connection, chdb.target, { log: () => {} })
    front = await startChdbHttp(directory)
    client = createClient({ url: front.url, log: { level: ClickHouseLogLevel.OFF } })
    connection = await reference.instance.connect()
    return {
      executors: {
        duckdb: duckDbSqlExecutor(connection),
        postgres: postgresExecutor(pool),
        chdb: clickHouseSqlExecutor(chdb.executor),
        clickhouse: clickHouseSqlExecutor(serverExecutor(client))
      },
      reference,
      pool,
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}
