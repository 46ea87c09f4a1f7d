/**
 * chDB: the ClickHouse engine as a library, in this process. It runs the SQL and `{name:Type}`
 * parameters the ClickHouse driver renders for a server, so definitions developed against it
 * deploy unchanged against a ClickHouse server.
 *
 * chDB is about 540 MB and not a dependency of this package. It is loaded from the project's
 * node_modules (`npm install chdb`) or else from `.cache/test-binaries` (`npm run test:binaries`).
 */
import { createRequire } from "node:module"
import type { ParquetTarget } from "../analytics/copyDataset.js"
import type { Row, SqlValue } from "../analytics/sql.js"
import { type ClickHouseExecutor, type ClickHouseJson, createTableSql, JSON_SETTINGS, rowsFromJson } from "./clickhouse.js"

/** The part of chDB's API used here and by the tests' HTTP front (chdb 3.x). */
export interface ChdbResult {
  text(): string
  bytes(): Uint8Array
  readonly rowsRead: number
  readonly bytesRead: number
  /** Seconds. */
  readonly elapsed: number
}

export interface ChdbQueryOptions {
  readonly format?: string
  readonly signal?: AbortSignal | undefined
}

export interface ChdbSession {
  queryAsync(sql: string, options?: ChdbQueryOptions): Promise<ChdbResult>
  /**
   * Binds `{name:Type}` parameters in the engine: values never become SQL text. When `signal`
   * aborts, a query still queued never starts; a running one cannot be interrupted (chDB's C API
   * has no interrupt): the promise rejects at once and the engine finishes it unread.
   */
  queryBindAsync(sql: string, params: object, options?: ChdbQueryOptions): Promise<ChdbResult>
  close(): void
}

export interface ChdbModule {
  /**
   * No path: a temporary directory, removed on close. Sessions on one path share its data, each
   * with its own connection (settings, current database); a process holds one path at a time.
   */
  Session: new (path?: string, options?: { readonly connectionArgs?: ReadonlyArray<string> }) => ChdbSession
}

/** Where `npm run test:binaries` installs it (see scripts/fetch-test-binaries.mjs). */
const TEST_BINARIES = new URL("../../.cache/test-binaries/package.json", import.meta.url)

export const CHDB_MISSING =
  "chDB is not installed: run `npm run test:binaries` (installs it into .cache/test-binaries, about 540 MB) " +
  "or `npm install chdb`"

const isMissing = (error: unknown): boolean =>
  error instanceof Error && (error as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND" && error.message.includes("'chdb'")

/** The path chDB loads from, or undefined when it is not installed. */
export const findChdb = (): string | undefined => {
  for (const from of [import.meta.url, TEST_BINARIES]) {
    try {
      return createRequire(from).resolve("chdb")
    } catch (error) {
      if (!isMissing(error)) throw error
    }
  }
  return undefined
}

let loaded: { readonly chdb: ChdbModule; readonly version: string } | undefined

/** Loads chDB once (a second or two: the engine is a 540 MB library); throws CHDB_MISSING when absent. */
export const loadChdb = (): NonNullable<typeof loaded> => {
  if (loaded !== undefined) return loaded
  const path = findChdb()
  if (path === undefined) throw new Error(CHDB_MISSING)
  const load = createRequire(path)
  loaded = { chdb: load(path) as ChdbModule, version: (load("./package.json") as { version: string }).version }
  return loaded
}

/** ClickHouse's string literal: chDB's file() takes no parameters. */
const stringLiteral = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`

/** Rows per page of a chDB stream by default: each page is one query, so few pages, each a few MB of JSON. */
export const CHDB_PAGE_ROWS = 50_000

type Run = (sql: string, params: Readonly<Record<string, SqlValue>>, signal?: AbortSignal) => Promise<ReadonlyArray<Row>>

/**
 * A statement's rows page by page: the statement runs once per page, wrapped with LIMIT and OFFSET
 * (so the statement needs an ORDER BY that sets each row's place). chDB has a streamed read
 * (`queryStreamBind`), but it does not take its turn with the parameterized queries chDB runs one
 * at a time in a process (those it runs side by side can wrongly bind each other's values), and a
 * session holds one stream at a time: pages keep every query in that line. Ending the iteration
 * runs no further page; a page already running finishes in the engine, unread.
 */
async function* pages(run: Run, pageRows: number, sql: string, params: Readonly<Record<string, SqlValue>>, signal: AbortSignal | undefined): AsyncGenerator<ReadonlyArray<Row>, void, undefined> {
  const paged = `SELECT * FROM (${sql}) LIMIT {page_rows:UInt64} OFFSET {page_offset:UInt64}`
  for (let offset = 0; ; offset += pageRows) {
    const rows = await run(paged, { ...params, page_rows: pageRows, page_offset: offset }, signal).catch((error: unknown) => {
      throw signal?.aborted ? signal.reason : error
    })
    if (rows.length > 0) yield rows
    if (rows.length < pageRows) return
  }
}

export interface EmbeddedClickHouse {
  /** Runs the driver's SQL with `queryBindAsync`, off the event loop, JSON output. */
  readonly executor: ClickHouseExecutor
  /** Receives the demo tables from Parquet files DuckDB writes. */
  readonly target: ParquetTarget
  /** For banners: `chDB 3.4.0, ClickHouse 26.7.2.1`. */
  readonly version: string
}

/**
 * Opens a chDB session on `path` (default: a temporary directory removed on close); its streams
 * read `pageRows` rows per page. chDB binds
 * parameterized queries one at a time in a process, so concurrent requests queue for the engine,
 * each query still using all cores inside it. A request that ends leaves the queue (its query
 * never starts); one already running finishes in the engine, unread.
 */
export const openChdb = async (path?: string, { pageRows = CHDB_PAGE_ROWS }: { readonly pageRows?: number } = {}): Promise<EmbeddedClickHouse> => {
  const { chdb, version } = loadChdb()
  const session = new chdb.Session(path, {
    connectionArgs: Object.entries(JSON_SETTINGS).map(([name, value]) => `--${name}=${value}`)
  })
  const run = async (sql: string, params: Readonly<Record<string, SqlValue>>, signal?: AbortSignal): Promise<ReadonlyArray<Row>> => {
    const text = (await session.queryBindAsync(sql, params, { format: "JSON", signal })).text()
    // A statement without a result (DDL) prints nothing.
    return text === "" ? [] : rowsFromJson(JSON.parse(text) as ClickHouseJson)
  }
  const [engine] = await run("SELECT version() AS version", {})
  return {
    executor: {
      query: run,
      stream: (sql, params, signal) => pages(run, pageRows, sql, params, signal),
      close: async () => session.close()
    },
    target: {
      createTable: async (table, columns) => {
        await session.queryAsync(`DROP TABLE IF EXISTS "${table}"`)
        await session.queryAsync(createTableSql(table, columns))
      },
      insertParquet: async (table, file) => {
        await session.queryAsync(`INSERT INTO "${table}" SELECT * FROM file(${stringLiteral(file)}, Parquet)`)
      }
    },
    version: `chDB ${version}, ClickHouse ${String(engine?.version)}`
  }
}
