/**
 * What a dataset query needs from a database: one call that runs a compiled statement. The demo's
 * DuckDB, Postgres, ClickHouse and chDB drivers each implement it; queryserve compiles the SQL for the
 * executor's `dialect`.
 */

/** The SQL dialects a dataset compiles to. */
export type SqlDialect = "duckdb" | "postgres" | "clickhouse"

/**
 * A value bound to a placeholder: never spliced into the SQL text. Lists (`in`, `notIn`) get one
 * placeholder per element, so a driver only ever binds scalars. Times are bound as ISO text and cast
 * in the SQL.
 */
export type SqlParam = string | number | boolean

/**
 * A compiled statement. `params` is an array for the `$1…` placeholders of DuckDB and Postgres, and a
 * record (`p1`, `p2`, …) for ClickHouse's typed `{p1:Type}` placeholders.
 */
export interface SqlStatement {
  readonly sql: string
  readonly params: ReadonlyArray<SqlParam> | Readonly<Record<string, SqlParam>>
}

/** Runs statements; resolves the rows as objects keyed by the column aliases the statement wrote. */
export interface SqlExecutor {
  readonly dialect: SqlDialect
  execute(statement: SqlStatement, signal?: AbortSignal): Promise<ReadonlyArray<Record<string, unknown>>>
}
