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
  type DuckDBInstance,
  type DuckDBTimestampTZValue,
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
    yield* result.yieldConvertedRowObjects(toJson) as AsyncIterable<ReadonlyArray<Row>>
  } finally {
    prepared.destroySync()
  }
}

/** A driver over one connection, or over a pool of connections to the same database. */
export const duckDbDriver = (connections: DuckDBConnection | ConnectionPool): SqlDriver => {
  const pool = connections instanceof ConnectionPool ? connections : new ConnectionPool([connections])
  return {
    execute: (statement, signal) => pool.use((connection) => run(connection, statement), signal),
    stream: (statement, signal) => pool.useStreaming((connection) => streamChunks(connection, statement), signal)
  }
}
