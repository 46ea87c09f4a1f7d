/**
 * The demo's DuckDB database as a dataset `SqlExecutor`: the statements datasets compile (`$1…`
 * placeholders, which DuckDB prepares natively) run through the endpoints' DuckDB driver, with its
 * connection pool, cancellation and value conversion.
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import type { SqlExecutor } from "queryserve"
import { type ConnectionPool, duckDbDriver } from "./duckdb.js"

export const duckDbSqlExecutor = (connections: DuckDBConnection | ConnectionPool): SqlExecutor => {
  const driver = duckDbDriver(connections)
  return {
    dialect: "duckdb",
    execute: async (statement, signal) => {
      if (!Array.isArray(statement.params)) throw new TypeError("a DuckDB statement binds an array of parameters")
      // No hand-written SQL to check: every identifier of a dataset statement comes from its model.
      return driver.execute({ sql: statement.sql, params: statement.params, checks: [] }, signal)
    }
  }
}
