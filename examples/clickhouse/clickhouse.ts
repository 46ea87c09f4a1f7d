/**
 * ClickHouse behind the demo's query helper, through `@clickhouse/client`. The builder writes `?`
 * placeholders; this driver turns each into a typed server-side parameter `{p0:String}` and sends
 * the value in `query_params`, so request input never becomes SQL text. `table(name).where()` is the
 * builder's own, so tenant auto-inject works unchanged. The SQL guard of ./analytics/duckdb.ts needs
 * DuckDB's parser; here hand-written SQL is trusted as reviewed code.
 */
import type { ClickHouseClient } from "@clickhouse/client"
import type { AnalyticsEndpoint } from "../analytics/api.js"
import { columnTypeIn, type DatasetTarget } from "../analytics/copyDataset.js"
import { renderPlaceholders, type Row, type SqlDriver, type SqlValue } from "../analytics/sql.js"

/**
 * The demo endpoints whose SQL needs nothing ClickHouse lacks. The others use DuckDB/Postgres
 * functions (quantile_cont, lag), Decimal-by-Float arithmetic (not defined in ClickHouse), or CTEs
 * named like the table they read.
 */
export const CLICKHOUSE_ENDPOINTS: ReadonlyArray<AnalyticsEndpoint> = ["revenueByDay", "revenueByRegion", "activeCustomers"]

const parameterType = (value: SqlValue): string =>
  typeof value === "string" ? "String" : typeof value === "boolean" ? "Bool" : Number.isInteger(value) ? "Int64" : "Float64"

export const clickHouseDriver = (client: ClickHouseClient): SqlDriver => ({
  execute: async ({ sql, params }) => {
    const query_params: Record<string, SqlValue> = {}
    const query = renderPlaceholders(sql, (index) => {
      const value = params[index]!
      query_params[`p${index}`] = value
      return `{p${index}:${parameterType(value)}}`
    })
    const result = await client.query({
      query,
      query_params,
      format: "JSONEachRow",
      // Plain JSON like the DuckDB driver's: 64-bit counts and decimals as numbers, NULL for no match.
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0, output_format_json_quote_decimals: 0, join_use_nulls: 1 }
    })
    return result.json<Row>()
  }
})

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`

const columnType = columnTypeIn("ClickHouse", { VARCHAR: "String", BIGINT: "Int64", INTEGER: "Int32", DATE: "Date", DECIMAL: "Decimal" })

/** Receives the demo tables as MergeTree tables sorted by tenant (and day), the order every query filters in. */
export const clickHouseTarget = (client: ClickHouseClient): DatasetTarget => ({
  createTable: async (table, columns) => {
    await client.command({ query: `DROP TABLE IF EXISTS ${quote(table)}` })
    const key = columns.some((c) => c.name === "day") ? `"tenant_id", "day"` : `"tenant_id"`
    await client.command({
      query: `CREATE TABLE ${quote(table)} (${columns.map((c) => `${quote(c.name)} ${columnType(c)}`).join(", ")})
              ENGINE = MergeTree ORDER BY (${key})`
    })
  },
  insert: async (table, _columns, rows) => {
    await client.insert({ table, values: rows, format: "JSONCompactEachRow" })
  }
})
