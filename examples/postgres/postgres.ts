/**
 * Postgres behind the demo's query helper, through `pg`. The builder writes `?` placeholders; this
 * driver renumbers them `$1, $2, ...` and lets `pg` bind the values, so request input never
 * becomes SQL text. `table(name).where(column, 'eq', value)` is the builder's own, so tenant
 * auto-inject works unchanged. The SQL guard of ./analytics/duckdb.ts needs DuckDB's parser; here
 * hand-written `raw()`/`db.with()` SQL is trusted as reviewed code. A statement whose signal aborts
 * is cancelled in Postgres, and pg's errors become queryserve's (classifyPostgresError). The same
 * runner serves datasets (postgresExecutor), whose compiled SQL has its `$n` placeholders already.
 */
import pg from "pg"
import { DatabaseUnreachable, GatewayTimeout, ServiceUnavailable } from "queryserve"
import type { AnalyticsEndpoint } from "../analytics/api.js"
import { cancellable } from "../analytics/cancel.js"
import { columnTypeIn, type DatasetTarget } from "../analytics/copyDataset.js"
import { exactNumber, finiteOrNull } from "../analytics/jsonValues.js"
import type { Row, SqlDriver, Statement } from "../analytics/sql.js"
import { renderPlaceholders, STANDARD_SQL } from "../analytics/sqlText.js"
import type { SqlExecutor } from "queryserve"

const { types } = pg

/** The demo endpoints whose SQL Postgres runs as written: all but the percentiles (DuckDB's quantile_cont). */
export const POSTGRES_ENDPOINTS: ReadonlyArray<AnalyticsEndpoint> = [
  "revenueByDay",
  "revenueByRegion",
  "topProducts",
  "activeCustomers",
  "cohortRetention",
  "funnel",
  "ordersExport",
  "ordersPage",
  "tenantSummary",
  "tenantsOverview"
]

const TIMESTAMPTZ = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/

/**
 * Postgres' text of a timestamptz, in whatever TimeZone the session has, as the UTC instant:
 * '2025-01-15 05:00:00.5-05' → '2025-01-15T10:00:00.5Z'. 'infinity' and BC dates stay as printed.
 */
const utcFromPostgres = (text: string): string => {
  const match = TIMESTAMPTZ.exec(text)
  if (match === null) return text
  const [, year, month, day, hour, minute, second, fraction = "", sign, offsetHours, offsetMinutes = "0", offsetSeconds = "0"] = match
  const offset = (sign === "-" ? -1 : 1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds))
  const utc = new Date(0)
  // setUTCFullYear, not Date.UTC: that reads years 0 to 99 as 1900 to 1999.
  utc.setUTCFullYear(Number(year), Number(month) - 1, Number(day))
  utc.setUTCHours(Number(hour), Number(minute), Number(second) - offset)
  return `${utc.toISOString().slice(0, 19)}${fraction}Z`
}

// The values of ../analytics/jsonValues.ts, as the DuckDB driver gives them. pg's defaults: strings
// for int8 and numeric, NaN for float8 'NaN', and a Date for date, timestamp and timestamptz, the
// first two read in this process' time zone.
const PARSERS = new Map<number, (text: string) => unknown>([
  [types.builtins.INT8, exactNumber],
  [types.builtins.NUMERIC, exactNumber],
  [types.builtins.FLOAT4, (text) => finiteOrNull(Number(text))],
  [types.builtins.FLOAT8, (text) => finiteOrNull(Number(text))],
  [types.builtins.DATE, (text) => text],
  [types.builtins.TIMESTAMP, (text) => text],
  [types.builtins.TIMESTAMPTZ, utcFromPostgres]
])

const rowTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    PARSERS.get(oid) ?? types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"]
}

/**
 * Timeouts for the demo's pool. Postgres ends a statement after 25 s, before queryserve's default
 * `requestTimeout` (30 s) answers 504, so a statement whose cancel never arrived stops anyway.
 * Connecting, or waiting for a pooled connection, gives up after 5 s.
 */
export const POOL_TIMEOUTS = { statement_timeout: 25_000, connectionTimeoutMillis: 5_000 } as const satisfies pg.PoolConfig

/** SQLSTATEs of a connection the server ended or refused (admin_shutdown, crash_shutdown, cannot_connect_now), and class 08. */
const CONNECTION_ENDED = /^(57P0[123]|08...)$/
/** pg's errors for a connection that broke, or that did not open in time. */
const CONNECTION_LOST: ReadonlySet<string> = new Set(["Connection terminated unexpectedly", "Connection terminated due to connection timeout"])
/** pg-pool's error when no pooled connection became free within connectionTimeoutMillis. */
const POOL_BUSY = "timeout exceeded when trying to connect"
const QUERY_CANCELED = "57014"

/**
 * A failure of `pg` as queryserve should answer it. A connection the server ended or that broke is
 * DatabaseUnreachable (503), as a server refusing connections is; a statement Postgres cancelled
 * itself (statement_timeout) a GatewayTimeout (504); a pool with no free connection in time a
 * ServiceUnavailable (503). Anything else (a bad query) stays as it is.
 */
export const classifyPostgresError = (error: unknown, statementTimeoutMs: number): unknown => {
  if (!(error instanceof Error)) return error
  const code = error instanceof pg.DatabaseError ? error.code : undefined
  if ((code !== undefined && CONNECTION_ENDED.test(code)) || CONNECTION_LOST.has(error.message)) {
    return new DatabaseUnreachable({ message: "The database is unreachable", cause: error })
  }
  if (code === QUERY_CANCELED) return new GatewayTimeout({ message: "The database cancelled the query", timeoutMs: statementTimeoutMs })
  if (error.message === POOL_BUSY) return new ServiceUnavailable({ message: "Every database connection is busy" })
  return error
}

/**
 * A pooled client, or `signal`'s reason once it aborts. pg-pool cannot take a waiter out of its
 * queue: a client it hands over after the abort goes straight back, having run nothing.
 */
const checkout = (pool: pg.Pool, signal: AbortSignal | undefined): Promise<pg.PoolClient> => {
  if (signal === undefined) return pool.connect()
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const leave = (): void => reject(signal.reason)
    signal.addEventListener("abort", leave, { once: true })
    pool.connect().then(
      (client) => {
        signal.removeEventListener("abort", leave)
        if (signal.aborted) client.release()
        else resolve(client)
      },
      (error: unknown) => {
        signal.removeEventListener("abort", leave)
        reject(error)
      }
    )
  })
}

/** The backend's process id, which pg keeps from the connection's start (@types/pg leaves it out). */
const backendPid = (client: pg.PoolClient): number => (client as pg.PoolClient & { readonly processID: number }).processID

/**
 * Asks Postgres to cancel what `client`'s backend runs, over a connection of its own: the pool's
 * may all be busy. Should that fail, statement_timeout still ends the statement.
 */
const cancelBackend = (config: pg.ClientConfig, client: pg.PoolClient): void => {
  const canceller = new pg.Client(config)
  // A connection error after connect() is emitted, and an unheard 'error' event would end the process.
  canceller.on("error", () => {})
  canceller
    .connect()
    .then(() => canceller.query("SELECT pg_cancel_backend($1)", [backendPid(client)]))
    .catch((error: unknown) => console.warn(`[postgres] could not cancel a query: ${error instanceof Error ? error.message : String(error)}`))
    .finally(() => canceller.end().catch(() => {}))
}

/** pg also emits a checked-out client's broken connection as 'error', which pg-pool hears only on idle clients. */
const reportedByTheQuery = (): void => {}

/** A statement as pg takes it: `$n` placeholders in `text`, their values in order. */
interface PostgresStatement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

/**
 * A pooled client checked out for one statement or one cursor: its queries are cancelled in
 * Postgres when `signal` aborts, and `release` discards a client a cancel may still reach (or one
 * left broken) rather than pooling it.
 */
const checkedOut = async (pool: pg.Pool, signal: AbortSignal | undefined) => {
  const client = await checkout(pool, signal)
  client.on("error", reportedByTheQuery)
  let cancelled = false
  const cancel = (): void => {
    cancelled = true
    cancelBackend(pool.options, client)
  }
  return {
    client,
    get cancelled() {
      return cancelled
    },
    query: (config: pg.QueryConfig) => cancellable(signal, () => client.query(config), cancel),
    release: (broken: boolean): void => {
      client.off("error", reportedByTheQuery)
      // A cancel may still be on its way: the next query on this backend could be the one it cancels.
      client.release(cancelled || broken)
    }
  }
}

const run = async (pool: pg.Pool, { text, values }: PostgresStatement, signal: AbortSignal | undefined): Promise<ReadonlyArray<Row>> => {
  const session = await checkedOut(pool, signal)
  try {
    return (await session.query({ text, values: [...values], types: rowTypes })).rows as Array<Row>
  } finally {
    session.release(false)
  }
}

/** Rows per FETCH from a cursor: a few hundred KB of rows, few round trips. */
export const CURSOR_BATCH_ROWS = 5_000

/**
 * The rows of a statement through a server-side cursor, CURSOR_BATCH_ROWS at a time: Postgres
 * keeps the result and sends only what each FETCH asks for. A cursor lives in a transaction, so the
 * client stays checked out until the iteration ends; then ROLLBACK closes the cursor. A FETCH
 * running when `signal` aborts is cancelled in Postgres, and its client is discarded rather than
 * pooled (a late cancel could hit its next query).
 */
async function* streamRows(pool: pg.Pool, { text, values }: PostgresStatement, signal: AbortSignal | undefined): AsyncGenerator<ReadonlyArray<Row>, void, undefined> {
  const session = await checkedOut(pool, signal)
  let broken: unknown
  try {
    await session.query({ text: "BEGIN READ ONLY" })
    await session.query({ text: `DECLARE queryserve_export NO SCROLL CURSOR FOR ${text}`, values: [...values] })
    while (true) {
      const { rows } = await session.query({ text: `FETCH ${CURSOR_BATCH_ROWS} FROM queryserve_export`, types: rowTypes })
      if (rows.length > 0) yield rows as Array<Row>
      if (rows.length < CURSOR_BATCH_ROWS) return
    }
  } catch (error) {
    broken = error
    throw error
  } finally {
    // Ended early or failed: the transaction (and its cursor) goes with a ROLLBACK, or with the connection.
    if (!session.cancelled && broken === undefined) await session.client.query("ROLLBACK").catch((error: unknown) => (broken = error))
    session.release(broken !== undefined)
  }
}

/**
 * Runs `$n` statements on pooled clients, whole or through a cursor. A signal that aborts takes a
 * statement out of the pool's line or cancels it in Postgres; errors are classified by
 * classifyPostgresError.
 */
const runner = (pool: pg.Pool) => {
  const statementTimeoutMs = Number(pool.options.statement_timeout || 0)
  const classified = (error: unknown): never => {
    throw classifyPostgresError(error, statementTimeoutMs)
  }
  return {
    execute: (statement: PostgresStatement, signal: AbortSignal | undefined): Promise<ReadonlyArray<Row>> =>
      run(pool, statement, signal).catch(classified),
    stream: async function* (statement: PostgresStatement, signal: AbortSignal | undefined): AsyncGenerator<ReadonlyArray<Row>, void, undefined> {
      try {
        yield* streamRows(pool, statement, signal)
      } catch (error) {
        classified(error)
      }
    }
  }
}

/** The demo's query helper over `pool`: its `?` placeholders become `$1, $2, ...`. */
export const postgresDriver = (pool: pg.Pool): SqlDriver => {
  const statements = runner(pool)
  const numbered = ({ sql, params }: Statement): PostgresStatement =>
    ({ text: renderPlaceholders(sql, STANDARD_SQL, params.length, (index) => `$${index + 1}`), values: params })
  return {
    execute: (statement, signal) => statements.execute(numbered(statement), signal),
    stream: (statement, signal) => statements.stream(numbered(statement), signal)
  }
}

/** A dataset's executor over `pool`: the compiled statement's `$n` placeholders go to pg as written. */
export const postgresExecutor = (pool: pg.Pool): SqlExecutor => {
  const { execute } = runner(pool)
  return {
    dialect: "postgres",
    execute: ({ sql, params }, signal) =>
      Array.isArray(params)
        ? execute({ text: sql, values: params }, signal)
        : Promise.reject(new TypeError("A Postgres statement binds its values by position: params must be an array"))
  }
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`

const columnType = columnTypeIn("Postgres", { VARCHAR: "text", BIGINT: "bigint", INTEGER: "integer", DATE: "date", DECIMAL: "numeric" })

/** Receives the demo tables; one `INSERT ... SELECT FROM unnest($1::type[], ...)` per batch. */
export const postgresTarget = (pool: pg.Pool): DatasetTarget => ({
  createTable: async (table, columns) => {
    await pool.query(`DROP TABLE IF EXISTS ${quote(table)}`)
    await pool.query(`CREATE TABLE ${quote(table)} (${columns.map((c) => `${quote(c.name)} ${columnType(c)}`).join(", ")})`)
    // Every query filters on the tenant first, and most on a day range within it.
    const key = columns.some((c) => c.name === "day") ? `"tenant_id", "day"` : `"tenant_id"`
    await pool.query(`CREATE INDEX ON ${quote(table)} (${key})`)
  },
  insert: async (table, columns, rows) => {
    const arrays = columns.map((_, i) => rows.map((row) => row[i] ?? null))
    const unnest = columns.map((column, i) => `$${i + 1}::${columnType(column)}[]`).join(", ")
    await pool.query(`INSERT INTO ${quote(table)} SELECT * FROM unnest(${unnest})`, arrays)
  }
})
