/** The demo's DuckDB data with the `order_facts` view, its dataset executor, and plain SQL for the expected answers. */
import { createDemoDatabase } from "../../examples/analytics/dataset.js"
import { duckDbDriver } from "../../examples/analytics/duckdb.js"
import type { Row } from "../../examples/analytics/sql.js"
import { duckDbSqlExecutor } from "../../examples/analytics/sqlExecutor.js"
import type { SqlExecutor, SqlStatement } from "queryserve"
import { ORDER_FACTS_VIEW } from "./ordersModel.js"

export interface DemoDatabase {
  readonly executor: SqlExecutor
  /** Hand-written SQL with `?` placeholders, values converted as the endpoints' driver does. */
  readonly sql: (text: string, ...params: ReadonlyArray<string | number | boolean>) => Promise<ReadonlyArray<Row>>
  readonly close: () => Promise<void>
}

export const openDemoDatabase = async (rows = 30_000): Promise<DemoDatabase> => {
  const demo = await createDemoDatabase({ rows, log: () => undefined })
  await demo.connection.run(ORDER_FACTS_VIEW)
  const driver = duckDbDriver(demo.connection)
  return {
    executor: duckDbSqlExecutor(demo.connection),
    sql: (text, ...params) => driver.execute({ sql: text, params, checks: [] }),
    close: () => demo.close()
  }
}

/** An executor that records every statement before handing it to `inner`: proof of what ran, and that nothing did. */
export const recording = (inner: SqlExecutor): SqlExecutor & { readonly statements: Array<SqlStatement> } => {
  const statements: Array<SqlStatement> = []
  return {
    dialect: inner.dialect,
    statements,
    execute: (statement, signal) => {
      statements.push(statement)
      return inner.execute(statement, signal)
    }
  }
}
