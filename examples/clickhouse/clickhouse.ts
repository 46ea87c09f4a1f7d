/**
 * ClickHouse behind the demo's query helper. The builder writes `?` placeholders; this driver
 * turns each into a typed parameter `{p0:String}` and hands the value to the engine separately,
 * so request input never becomes SQL text. Two executors run the same rendered SQL and values:
 * a ClickHouse server through `@clickhouse/client` (here), and chDB, the ClickHouse engine
 * inside this process (./chdb.ts). `table(name).where()` is the builder's own, so tenant
 * auto-inject works unchanged. The SQL guard of ../analytics/duckdb.ts needs DuckDB's parser;
 * here hand-written SQL is trusted as reviewed code.
 */
import type { ClickHouseClient } from "@clickhouse/client"
import { type Column, columnTypeIn, type DatasetTarget } from "../analytics/copyDataset.js"
import type { TableName } from "../analytics/dataset.js"
import type { Row, SqlDriver, SqlValue } from "../analytics/sql.js"
import { CLICKHOUSE_SQL, renderPlaceholders } from "../analytics/sqlText.js"

/** Runs ClickHouse SQL: a server, or the engine in this process. */
export interface ClickHouseExecutor {
  /** Runs one statement whose `{name:Type}` parameters take their values from `params`; resolves with its rows. */
  query(sql: string, params: Readonly<Record<string, SqlValue>>): Promise<ReadonlyArray<Row>>
  close(): Promise<void>
}

/**
 * Plain JSON like the DuckDB driver's: 64-bit counts and decimals as numbers, and NULL (not the
 * type's default) where an outer join finds no match. The server takes them per query, chDB when
 * its session opens.
 */
export const JSON_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
  join_use_nulls: 1
} as const

/** A ClickHouse server, through `@clickhouse/client`. */
export const serverExecutor = (client: ClickHouseClient): ClickHouseExecutor => ({
  query: async (query, query_params) => {
    const result = await client.query({ query, query_params, format: "JSONEachRow", clickhouse_settings: JSON_SETTINGS })
    return result.json<Row>()
  },
  close: () => client.close()
})

/** The ClickHouse type a value is bound as: its JavaScript type decides, never its text. */
export const parameterType = (value: SqlValue): string =>
  typeof value === "string" ? "String" : typeof value === "boolean" ? "Bool" : Number.isInteger(value) ? "Int64" : "Float64"

export const clickHouseDriver = (executor: ClickHouseExecutor): SqlDriver => ({
  dialect: CLICKHOUSE_SQL,
  execute: ({ sql, params }) => {
    const bound: Record<string, SqlValue> = {}
    const query = renderPlaceholders(sql, CLICKHOUSE_SQL, params.length, (index) => {
      const value = params[index]!
      bound[`p${index}`] = value
      return `{p${index}:${parameterType(value)}}`
    })
    return executor.query(query, bound)
  }
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
