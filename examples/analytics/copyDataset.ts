/**
 * Copies the demo tables from DuckDB into another database, so the same API can be tried there
 * (examples/postgres, examples/clickhouse). Rows stream out of DuckDB chunk by chunk and go in as
 * bound batches; an engine in this process that reads local files (chDB) gets each table as a
 * Parquet file instead, so the rows never pass through JavaScript. The target decides its own
 * column types and table layout.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { DuckDBConnection } from "@duckdb/node-api"
import { createDemoDatabase, TABLES, type TableName } from "./dataset.js"
import { toJson } from "./duckdb.js"
import type { Json } from "./sql.js"

export interface Column {
  readonly name: string
  /** DuckDB's name of the column type: VARCHAR, BIGINT, INTEGER, DATE, DECIMAL(12,2)... */
  readonly duckDbType: string
}

/** A database that receives the demo tables as batches of rows. */
export interface DatasetTarget {
  /** Drops and creates `table`. */
  createTable(table: TableName, columns: ReadonlyArray<Column>): Promise<void>
  insert(table: TableName, columns: ReadonlyArray<Column>, rows: ReadonlyArray<ReadonlyArray<Json>>): Promise<void>
}

/** A database in this process that receives each demo table as a Parquet file DuckDB wrote. */
export interface ParquetTarget {
  /** Drops and creates `table`. */
  createTable(table: TableName, columns: ReadonlyArray<Column>): Promise<void>
  /** Appends the rows of the Parquet file at `path`, whose columns are `columns` in order. */
  insertParquet(table: TableName, path: string): Promise<void>
}

/** A database's names for the column types of the demo tables. */
export interface ColumnTypeNames {
  readonly VARCHAR: string
  readonly BIGINT: string
  readonly INTEGER: string
  readonly DATE: string
  /** Takes DuckDB's precision and scale as they are: `DECIMAL(12,2)` → `<DECIMAL>(12,2)`. */
  readonly DECIMAL: string
}

/** The column type in a database that names types as `names` says. */
export const columnTypeIn = (database: string, names: ColumnTypeNames) => ({ duckDbType }: Column): string => {
  const [, base = duckDbType, precision = ""] = /^(\w+)(\(.*\))?$/.exec(duckDbType) ?? []
  if (!Object.hasOwn(names, base)) throw new Error(`no ${database} type for DuckDB's ${duckDbType}`)
  return names[base as keyof ColumnTypeNames] + precision
}

export interface CopyOptions {
  /** Rows per insert. Default 20,000. */
  readonly batchRows?: number
  /** Progress sink, one line per table. Default: console.log. */
  readonly log?: (line: string) => void
}

const copyRows = async (connection: DuckDBConnection, table: TableName, target: DatasetTarget, batchRows: number): Promise<number> => {
  const result = await connection.stream(`SELECT * FROM ${table}`)
  const types = result.columnTypes()
  const columns = result.columnNames().map((name, i) => ({ name, duckDbType: String(types[i]) }))
  await target.createTable(table, columns)
  let batch: Array<ReadonlyArray<Json>> = []
  let copied = 0
  const flush = async () => {
    await target.insert(table, columns, batch)
    copied += batch.length
    batch = []
  }
  for await (const rows of result.yieldConvertedRows(toJson)) {
    batch.push(...rows)
    if (batch.length >= batchRows) await flush()
  }
  if (batch.length > 0) await flush()
  return copied
}

const copyParquet = async (connection: DuckDBConnection, table: TableName, target: ParquetTarget, dir: string): Promise<number> => {
  const path = join(dir, `${table}.parquet`)
  // The directory comes from mkdtemp: a path without quotes.
  await connection.run(`COPY ${table} TO '${path}' (FORMAT parquet)`)
  const described = await connection.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE ${table})`)
  const columns = described.getRows().map(([name, duckDbType]) => ({ name: String(name), duckDbType: String(duckDbType) }))
  await target.createTable(table, columns)
  await target.insertParquet(table, path)
  const count = await connection.runAndReadAll(`SELECT count(*)::INTEGER FROM ${table}`)
  return Number(count.getRows()[0]?.[0])
}

const copyEach = async (copy: (table: TableName) => Promise<number>, log: (line: string) => void): Promise<void> => {
  for (const table of TABLES) {
    const started = performance.now()
    const copied = await copy(table)
    log(`[copy] ${table}: ${copied.toLocaleString("en-US")} rows (${((performance.now() - started) / 1000).toFixed(1)}s)`)
  }
}

export const copyDemoDataset = async (
  connection: DuckDBConnection,
  target: DatasetTarget | ParquetTarget,
  { batchRows = 20_000, log = console.log }: CopyOptions = {}
): Promise<void> => {
  if (!("insertParquet" in target)) return copyEach((table) => copyRows(connection, table, target, batchRows), log)
  const dir = mkdtempSync(join(tmpdir(), "queryserve-demo-"))
  try {
    await copyEach((table) => copyParquet(connection, table, target, dir), log)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Generates the demo dataset with `rows` order rows in a temporary DuckDB database and copies it into `target`. */
export const loadDemoDataset = async (target: DatasetTarget | ParquetTarget, rows: number, options: CopyOptions = {}): Promise<void> => {
  const demo = await createDemoDatabase({ rows, log: options.log })
  try {
    await copyDemoDataset(demo.connection, target, options)
  } finally {
    await demo.close()
  }
}
