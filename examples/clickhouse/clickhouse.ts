/**
 * ClickHouse behind the demo's query helper. The builder writes `?` placeholders; this driver
 * turns each into a typed parameter `{p0:String}` and hands the value to the engine separately,
 * so request input never becomes SQL text. Two executors run the same rendered SQL and values:
 * a ClickHouse server through `@clickhouse/client` (here), and chDB, the ClickHouse engine
 * inside this process (./chdb.ts). `table(name).where()` is the builder's own, so tenant
 * auto-inject works unchanged. The SQL guard of ../analytics/duckdb.ts needs DuckDB's parser;
 * here hand-written SQL is trusted as reviewed code. Datasets run their compiled statements,
 * already written with typed parameters, on either executor (clickHouseSqlExecutor).
 */
import type { ClickHouseClient, ClickHouseSettings } from "@clickhouse/client"
import { cancellable } from "../analytics/cancel.js"
import { type Column, columnTypeIn, type DatasetTarget } from "../analytics/copyDataset.js"
import type { TableName } from "../analytics/dataset.js"
import { exactNumber, withoutTrailingZeros } from "../analytics/jsonValues.js"
import type { Json, Row, SqlDriver, SqlValue, Statement } from "../analytics/sql.js"
import { CLICKHOUSE_SQL, renderPlaceholders } from "../analytics/sqlText.js"
import type { SqlExecutor, SqlParam, SqlStatement } from "queryserve"

/** Runs ClickHouse SQL: a server, or the engine in this process. */
export interface ClickHouseExecutor {
  /**
   * Runs one statement whose `{name:Type}` parameters take their values from `params`; resolves with
   * its rows, converted by rowsFromJson. When `signal` aborts, it stops waiting for them.
   */
  query(sql: string, params: Readonly<Record<string, SqlValue>>, signal?: AbortSignal): Promise<ReadonlyArray<Row>>
  /** The same rows batch by batch (see SqlDriver.stream): ending the iteration early stops the query. */
  stream(sql: string, params: Readonly<Record<string, SqlValue>>, signal?: AbortSignal): AsyncIterable<ReadonlyArray<Row>>
  close(): Promise<void>
}

/**
 * How ClickHouse writes JSON for rowsFromJson: 64-bit (and wider) integers and decimals quoted, so
 * that every digit arrives, and NULL (not the type's default) where an outer join finds no match.
 * NaN and ±Infinity it writes as null already. The server takes them per query, chDB when its
 * session opens.
 */
export const JSON_SETTINGS = {
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_decimals: 1,
  join_use_nulls: 1
} as const

/** ClickHouse's JSON output format: the result's column types, and its rows. */
export interface ClickHouseJson {
  readonly meta?: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly data: Array<Row>
}

type Convert = (value: Json) => Json

const WRAPPED = /^(?:Nullable|LowCardinality)\((.*)\)$/
const ARRAY = /^Array\((.*)\)$/
/** The types JSON_SETTINGS has quoted. */
const QUOTED_NUMBER = /^(?:U?Int(?:64|128|256)|Decimal)/

/** How a value of ClickHouse type `type` becomes what the other drivers give; undefined: as ClickHouse writes it. */
const converterFor = (type: string): Convert | undefined => {
  const wrapped = WRAPPED.exec(type)?.[1]
  if (wrapped !== undefined) return converterFor(wrapped)
  const element = ARRAY.exec(type)?.[1]
  const convertElement = element === undefined ? undefined : converterFor(element)
  if (convertElement !== undefined) {
    return (value) => (Array.isArray(value) ? value.map((item: Json) => (item === null ? null : convertElement(item))) : value)
  }
  if (QUOTED_NUMBER.test(type)) return (value) => (typeof value === "string" ? exactNumber(value) : value)
  // DuckDB and Postgres print no trailing zeros in a fraction of a second; DateTime64(3) prints '.000'.
  if (type.startsWith("DateTime64")) return (value) => (typeof value === "string" ? withoutTrailingZeros(value) : value)
  return undefined
}

/**
 * The rows of a JSON result, with the values of ../analytics/jsonValues.ts: integers and decimals
 * exact. A DateTime is a timestamp, written in its column's time zone: ClickHouse keeps time zones
 * in column types, not in values.
 */
export const rowsFromJson = ({ meta = [], data }: ClickHouseJson): ReadonlyArray<Row> => {
  const converted = meta.flatMap(({ name, type }) => {
    const convert = converterFor(type)
    return convert === undefined ? [] : [{ name, convert }]
  })
  for (const row of data) {
    for (const { name, convert } of converted) {
      const value = row[name]
      if (value !== null && value !== undefined) row[name] = convert(value)
    }
  }
  return data
}

/**
 * Reads JSONCompactEachRowWithNamesAndTypes, one line at a time: the names, then the types, then
 * the rows, each an array of values; gives each row as an object converted as rowsFromJson does,
 * undefined for the two header lines.
 */
export const compactRowReader = () => {
  let names: ReadonlyArray<string> | undefined
  let converters: ReadonlyArray<Convert | undefined> | undefined
  return (values: ReadonlyArray<Json>): Row | undefined => {
    if (names === undefined) {
      names = values as ReadonlyArray<string>
      return undefined
    }
    if (converters === undefined) {
      converters = (values as ReadonlyArray<string>).map(converterFor)
      return undefined
    }
    const row: Row = {}
    names.forEach((name, i) => {
      const value = values[i] ?? null
      const convert = converters![i]
      row[name] = value === null || convert === undefined ? value : convert(value)
    })
    return row
  }
}

/**
 * The queries of a ClickHouse server, through `@clickhouse/client`, with `settings` on each: whole
 * (JSON) or streamed (the client's stream of JSONCompactEachRowWithNamesAndTypes lines, read as the
 * server sends them). A stream ended early closes its HTTP response and aborts the request; with
 * `cancel_http_readonly_queries_on_client_close` the server then cancels the query, even one still
 * computing.
 */
export const serverQueries = (client: ClickHouseClient, settings: ClickHouseSettings): Omit<ClickHouseExecutor, "close"> => ({
  query: async (query, query_params, signal) => {
    const result = await client.query({ query, query_params, format: "JSON", clickhouse_settings: settings, abort_signal: signal })
    return rowsFromJson(await result.json<Row>())
  },
  stream: async function* (query, query_params, signal) {
    const request = new AbortController()
    const leave = (): void => request.abort(signal?.reason)
    signal?.addEventListener("abort", leave, { once: true })
    try {
      signal?.throwIfAborted()
      const result = await client.query({
        query,
        query_params,
        format: "JSONCompactEachRowWithNamesAndTypes",
        // Without it the server notices a client gone only when a write fails, after the query has computed its first block.
        clickhouse_settings: { ...settings, cancel_http_readonly_queries_on_client_close: 1 },
        abort_signal: request.signal
      })
      try {
        const read = compactRowReader()
        for await (const lines of result.stream<Array<Json>>()) {
          const rows: Array<Row> = []
          for (const line of lines) {
            const row = read(line.json())
            if (row !== undefined) rows.push(row)
          }
          if (rows.length > 0) yield rows
        }
      } finally {
        result.close()
      }
    } catch (error) {
      throw signal?.aborted ? signal.reason : error
    } finally {
      signal?.removeEventListener("abort", leave)
      request.abort()
    }
  }
})

/** A ClickHouse server, through `@clickhouse/client`. */
export const serverExecutor = (client: ClickHouseClient): ClickHouseExecutor => ({
  ...serverQueries(client, JSON_SETTINGS),
  close: () => client.close()
})

/** The ClickHouse type a value is bound as: its JavaScript type decides, never its text. */
export const parameterType = (value: SqlValue): string =>
  typeof value === "string" ? "String" : typeof value === "boolean" ? "Bool" : Number.isInteger(value) ? "Int64" : "Float64"

/** The statement with each `?` turned into a typed parameter `{pN:Type}`, and the values by name. */
const bindParameters = ({ sql, params }: Statement): { readonly query: string; readonly bound: Record<string, SqlValue> } => {
  const bound: Record<string, SqlValue> = {}
  const query = renderPlaceholders(sql, CLICKHOUSE_SQL, params.length, (index) => {
    const value = params[index]!
    bound[`p${index}`] = value
    return `{p${index}:${parameterType(value)}}`
  })
  return { query, bound }
}

export const clickHouseDriver = (executor: ClickHouseExecutor): SqlDriver => ({
  dialect: CLICKHOUSE_SQL,
  execute: (statement, signal) => {
    const { query, bound } = bindParameters(statement)
    // The executor stops on the signal itself; cancellable makes its failure the signal's reason.
    return cancellable(signal, () => executor.query(query, bound, signal))
  },
  stream: (statement, signal) => {
    const { query, bound } = bindParameters(statement)
    return executor.stream(query, bound, signal)
  }
})

const byName = (params: SqlStatement["params"]): params is Readonly<Record<string, SqlParam>> => !Array.isArray(params)

/**
 * A dataset's executor over a ClickHouse server or chDB: the compiled statement's `{p1:Type}`
 * placeholders take their values from its params record, bound by the engine.
 */
export const clickHouseSqlExecutor = (executor: ClickHouseExecutor): SqlExecutor => ({
  dialect: "clickhouse",
  execute: ({ sql, params }, signal) =>
    byName(params)
      ? cancellable(signal, () => executor.query(sql, params, signal))
      : Promise.reject(new TypeError("A ClickHouse statement binds its values by name: params must be a record"))
})

const quote = (name: string): string => `"${name.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`

const columnType = columnTypeIn("ClickHouse", { VARCHAR: "String", BIGINT: "Int64", INTEGER: "Int32", DATE: "Date", DECIMAL: "Decimal" })

/** A demo table as a MergeTree table sorted by tenant (and day), the order every query filters in. */
export const createTableSql = (table: TableName, columns: ReadonlyArray<Column>): string => {
  const key = columns.some((c) => c.name === "day") ? `"tenant_id", "day"` : `"tenant_id"`
  return `CREATE TABLE ${quote(table)} (${columns.map((c) => `${quote(c.name)} ${columnType(c)}`).join(", ")})
          ENGINE = MergeTree ORDER BY (${key})`
}

/** Receives the demo tables on a ClickHouse server, as batches of rows. */
export const clickHouseTarget = (client: ClickHouseClient): DatasetTarget => ({
  createTable: async (table, columns) => {
    await client.command({ query: `DROP TABLE IF EXISTS ${quote(table)}` })
    await client.command({ query: createTableSql(table, columns) })
  },
  insert: async (table, _columns, rows) => {
    await client.insert({ table, values: rows, format: "JSONCompactEachRow" })
  }
})
