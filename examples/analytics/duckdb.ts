/**
 * The DuckDB driver of the query helper: runs statements on a small pool of connections to one
 * database, checks hand-written SQL with DuckDB's own parser, and converts values to plain JSON.
 */
import {
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  doubleFromDecimalValue,
  type DuckDBConnection,
  type DuckDBInstance,
  type DuckDBValueConverter,
  type Json
} from "@duckdb/node-api"
import { type ReadCheck, type Row, type SqlDriver, SqlGuardError, type Statement } from "./sql.js"

/**
 * Connections handed out one statement at a time. A DuckDB connection runs one statement at a
 * time, so concurrent requests on a single connection queue behind each other; a few connections
 * let a short query pass a long one (each query still uses all cores inside DuckDB).
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

  async use<A>(work: (connection: DuckDBConnection) => Promise<A>): Promise<A> {
    const connection = this.idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.waiting.push(resolve)))
    try {
      return await work(connection)
    } finally {
      const next = this.waiting.shift()
      if (next === undefined) this.idle.push(connection)
      else next(connection)
    }
  }

  closeSync(): void {
    for (const connection of this.connections) connection.closeSync()
  }
}

// getTableNames(sql, true) lists base-table references as `name` or `name AS alias`,
// qualified ones as `schema.name`; names defined by the SQL's own CTEs are left out.
const TABLE_REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?: AS .*)?$/s

const assertReadsOnly = async (connection: DuckDBConnection, { sql, allowed }: ReadCheck): Promise<void> => {
  // getTableNames() returns nothing for SQL it cannot parse, so parse first; this throws.
  const statements = await connection.extractStatements(sql)
  if (statements.count !== 1) throw new SqlGuardError(`Expected one SQL statement: ${sql}`)
  for (const reference of connection.getTableNames(sql, true)) {
    const name = TABLE_REFERENCE.exec(reference)?.[1]?.toLowerCase()
    if (name === undefined || !allowed.has(name)) {
      throw new SqlGuardError(
        `SQL reads table "${reference}" directly; read tables through db.table() builders passed as db.with() sources: ${sql}`
      )
    }
  }
}

/** BIGINT and DECIMAL become numbers, DATE 'YYYY-MM-DD'; the rest as node-api's JSON converter says. */
export const toJson: DuckDBValueConverter<Json> = (value, type, converter) => {
  if (value === null) return null
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return Number(value)
    case DuckDBTypeId.DECIMAL:
      return doubleFromDecimalValue(value)
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

/** A driver over one connection, or over a pool of connections to the same database. */
export const duckDbDriver = (connections: DuckDBConnection | ConnectionPool): SqlDriver => {
  const pool = connections instanceof ConnectionPool ? connections : new ConnectionPool([connections])
  return { execute: (statement) => pool.use((connection) => run(connection, statement)) }
}
