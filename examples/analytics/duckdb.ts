/**
 * The DuckDB driver of the query helper: runs statements on a small pool of connections to one
 * database, checks hand-written SQL with DuckDB's own parser (./duckdbReadGuard.ts), and converts
 * values to plain JSON.
 */
import {
  DuckDBTimestampValue,
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  type DuckDBConnection,
  type DuckDBDateValue,
  type DuckDBDecimalType,
  type DuckDBDecimalValue,
  type DuckDBInstance,
  type DuckDBTimestampTZValue,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
  type Json
} from "@duckdb/node-api"
import { cancellable } from "./cancel.js"
import { assertReadsOnly } from "./duckdbReadGuard.js"
import { exactInteger, exactNumber, finiteOrNull, utcInstant } from "./jsonValues.js"
import type { Row, SqlDriver, Statement } from "./sql.js"

const INTERRUPT_REPEAT_MS = 20

/**
 * Interrupts what `connection` runs. DuckDB drops an interrupt that comes between two statements of
 * a piece of work, or before its worker thread starts one: `start` repeats it until `stop`.
 */
const interrupterOf = (connection: DuckDBConnection) => {
  let repeating: NodeJS.Timeout | undefined
  return {
    start: (): void => {
      connection.interrupt()
      repeating ??= setInterval(() => connection.interrupt(), INTERRUPT_REPEAT_MS)
    },
    stop: (): void => clearInterval(repeating)
  }
}

/**
 * Connections handed out one statement at a time. A DuckDB connection runs one statement at a
 * time, so concurrent requests on a single connection queue behind each other; a few connections
 * let a short query pass a long one (each query still uses all cores inside DuckDB). A request that
 * ends leaves the queue, or has its running statement interrupted: only live requests hold the pool.
 */
export class ConnectionPool {
  private readonly idle: Array<DuckDBConnection>
  private readonly waiting: Array<(connection: DuckDBConnection) => void> = []

  constructor(readonly connections: ReadonlyArray<DuckDBConnection>) {
    if (connections.length === 0) throw new RangeError("a pool needs at least one connection")
    this.idle = [...connections]
  }

  /** Opens `size` connections to `instance`. */
  static async open(instance: DuckDBInstance, size: number): Promise<ConnectionPool> {
    const connections = await Promise.all(Array.from({ length: size }, () => instance.connect()))
    return new ConnectionPool(connections)
  }

  /**
   * Runs `work` on a free connection, waiting in line for one. When `signal` aborts, the wait ends
   * at once, or DuckDB interrupts the running statement; either way with the signal's reason.
   */
  async use<A>(work: (connection: DuckDBConnection) => Promise<A>, signal?: AbortSignal): Promise<A> {
    const connection = await this.acquire(signal)
    const interrupter = interrupterOf(connection)
    try {
      return await cancellable(signal, () => work(connection), interrupter.start)
    } finally {
      interrupter.stop()
      this.release(connection)
    }
  }

  /**
   * use() for a result read over time: the connection stays taken while the caller iterates what
   * `work` yields, and is handed on once the iteration ends, whether it ran out, failed or was
   * ended early (`return()`). `signal` interrupts the running statement, as in use().
   */
  async *useStreaming<A>(work: (connection: DuckDBConnection) => AsyncIterable<A>, signal?: AbortSignal): AsyncGenerator<A, void, undefined> {
    const connection = await this.acquire(signal)
    const interrupter = interrupterOf(connection)
    signal?.addEventListener("abort", interrupter.start, { once: true })
    try {
      yield* work(connection)
    } catch (error) {
      throw signal?.aborted ? signal.reason : error
    } finally {
      signal?.removeEventListener("abort", interrupter.start)
      interrupter.stop()
      this.release(connection)
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<DuckDBConnection> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    const idle = this.idle.pop()
    if (idle !== undefined) return Promise.resolve(idle)
    return new Promise((resolve, reject) => {
      const leave = (): void => {
        this.waiting.splice(this.waiting.indexOf(take), 1)
        reject(signal?.reason)
      }
      const take = (connection: DuckDBConnection): void => {
        signal?.removeEventListener("abort", leave)
        resolve(connection)
      }
      this.waiting.push(take)
      signal?.addEventListener("abort", leave, { once: true })
    })
  }

  private release(connection: DuckDBConnection): void {
    const next = this.waiting.shift()
    if (next === undefined) this.idle.push(connection)
    else next(connection)
  }

  closeSync(): void {
    for (const connection of this.connections) connection.closeSync()
  }
}

/**
 * The values of ./jsonValues.ts: BIGINT and DECIMAL exact, TIMESTAMPTZ as its UTC instant (node-api
 * would print it in this process' time zone), NaN as null; DATE 'YYYY-MM-DD'; the rest as
 * node-api's JSON converter says (TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff]').
 */
export const toJson: DuckDBValueConverter<Json> = (value, type, converter) => {
  if (value === null) return null
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return exactInteger(value as bigint)
    case DuckDBTypeId.DECIMAL:
      return exactNumber(String(value))
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return finiteOrNull(value as number)
    case DuckDBTypeId.TIMESTAMP_TZ:
      return utcInstant(String(new DuckDBTimestampValue((value as DuckDBTimestampTZValue).micros)))
    case DuckDBTypeId.DATE:
      return String(value)
    default:
      return JsonDuckDBValueConverter(value, type, converter)
  }
}

const run = async (connection: DuckDBConnection, { sql, params, checks }: Statement): Promise<ReadonlyArray<Row>> => {
  for (const check of checks) await assertReadsOnly(connection, check)
  // prepare() also refuses more than one statement.
  const prepared = await connection.prepare(sql)
  try {
    prepared.bind([...params])
    const reader = await prepared.runAndReadAll()
    return reader.convertRowObjects(toJson) as ReadonlyArray<Row>
  } finally {
    prepared.destroySync()
  }
}

/**
 * A streaming result, one converted chunk (up to 2,048 rows) at a time: DuckDB computes the next
 * rows only as chunks are fetched. A result left unread when the caller stops is dropped by the
 * connection's next statement.
 */
async function* streamChunks(connection: DuckDBConnection, { sql, params, checks }: Statement): AsyncGenerator<ReadonlyArray<Row>, void, undefined> {
  for (const check of checks) await assertReadsOnly(connection, check)
  const prepared = await connection.prepare(sql)
  try {
    prepared.bind([...params])
    const result = await prepared.stream()
    const names = result.columnNames()
    const converters = result.columnTypes().map(columnConverter)
    for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      yield rowObjects(chunk.getColumns(), names, converters)
    }
  } finally {
    prepared.destroySync()
  }
}

type ColumnConverter = (value: DuckDBValue) => Json

/** Widest DECIMAL whose scaled integer, divided by its power of ten, is the double its text reads as. */
const EXACT_DECIMAL_DIGITS = 15

/**
 * toJson for one column, chosen once per result by its type: an export converts millions of values,
 * and the common types need no converter call each (the same values as toJson gives, tested).
 */
const columnConverter = (type: DuckDBType): ColumnConverter => {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.VARCHAR:
      return (value) => value as Json
    case DuckDBTypeId.BIGINT:
      return (value) => (value === null ? null : exactInteger(value as bigint))
    case DuckDBTypeId.DECIMAL: {
      const { width, scale } = type as DuckDBDecimalType
      if (width > EXACT_DECIMAL_DIGITS) break
      // Both integers are exact doubles and division rounds correctly: the nearest double to the decimal.
      const divisor = 10 ** scale
      return (value) => (value === null ? null : Number((value as DuckDBDecimalValue).value) / divisor)
    }
    case DuckDBTypeId.DATE: {
      // A result's dates repeat (an export of a year has 365): each is printed once.
      const texts = new Map<number, string>()
      return (value) => {
        if (value === null) return null
        const days = (value as DuckDBDateValue).days
        let text = texts.get(days)
        if (text === undefined) texts.set(days, (text = String(value)))
        return text
      }
    }
  }
  return (value) => toJson(value, type, toJson)
}

const rowObjects = (columns: ReadonlyArray<ReadonlyArray<DuckDBValue>>, names: ReadonlyArray<string>, converters: ReadonlyArray<ColumnConverter>): ReadonlyArray<Row> => {
  const count = columns[0]?.length ?? 0
  const rows: Array<Row> = new Array(count)
  for (let i = 0; i < count; i++) {
    const row: Record<string, Json> = {}
    for (let c = 0; c < names.length; c++) row[names[c]!] = converters[c]!(columns[c]![i]!)
    rows[i] = row
  }
  return rows
}

/** A driver over one connection, or over a pool of connections to the same database. */
export const duckDbDriver = (connections: DuckDBConnection | ConnectionPool): SqlDriver => {
  const pool = connections instanceof ConnectionPool ? connections : new ConnectionPool([connections])
  return {
    execute: (statement, signal) => pool.use((connection) => run(connection, statement), signal),
    stream: (statement, signal) => pool.useStreaming((connection) => streamChunks(connection, statement), signal)
  }
}
