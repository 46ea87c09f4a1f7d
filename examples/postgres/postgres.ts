/**
 * Postgres behind the demo's query helper, through `pg`. The builder writes `?` placeholders; this
 * driver renumbers them `$1, $2, ...` and lets `pg` bind the values, so request input never
 * becomes SQL text. `table(name).where(column, 'eq', value)` is the builder's own, so tenant
 * auto-inject works unchanged. The SQL guard of ./analytics/duckdb.ts needs DuckDB's parser; here
 * hand-written `raw()`/`db.with()` SQL is trusted as reviewed code.
 */
import pg from "pg"
import type { AnalyticsEndpoint } from "../analytics/api.js"
import { columnTypeIn, type DatasetTarget } from "../analytics/copyDataset.js"
import type { Row, SqlDriver } from "../analytics/sql.js"
import { renderPlaceholders, STANDARD_SQL } from "../analytics/sqlText.js"

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
  "tenantSummary",
  "tenantsOverview"
]

// Plain JSON like the DuckDB driver's: counts and money as numbers, days as 'YYYY-MM-DD'
// (pg's defaults are strings for int8/numeric and a local-time Date for date).
const PARSERS = new Map<number, (text: string) => unknown>([
  [types.builtins.INT8, Number],
  [types.builtins.NUMERIC, Number],
  [types.builtins.DATE, (text) => text]
])

const rowTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    PARSERS.get(oid) ?? types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"]
}

export const postgresDriver = (pool: pg.Pool): SqlDriver => ({
  execute: async ({ sql, params }) => {
    const result = await pool.query({
      text: renderPlaceholders(sql, STANDARD_SQL, params.length, (index) => `$${index + 1}`),
      values: [...params],
      types: rowTypes
    })
    return result.rows as Array<Row>
  }
})

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
