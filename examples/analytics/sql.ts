/**
 * A small immutable query builder, shaped so that tenant isolation can be added from outside:
 * the runtime's 'auto-inject' mode wraps `db.table(name)` so every builder it returns already
 * carries `.where(tenantColumn, 'eq', tenantId)`.
 *
 * The builder writes SQL with `?` placeholders; a `SqlDriver` renders the placeholders in its
 * database's syntax, binds the values and runs the statement (DuckDB: ./duckdb.ts, Postgres and
 * ClickHouse: examples/postgres and examples/clickhouse). Whatever the driver:
 * - values are always bound parameters; identifiers must match IDENTIFIER or be `raw()` fragments;
 * - hand-written fragments are read with the driver's SQL dialect (./sqlText.ts), so a `?` in
 *   quotes or comments is not a placeholder;
 * - base tables are meant to be read only through `db.table()`: `db.with()` exposes builders as
 *   CTEs named after their keys, so complex queries read only the rows their builders select.
 *   Keys are lower-case names, which every engine resolves alike (see LOWER_CASE_NAME).
 *   A driver that can parse SQL (DuckDB's) checks hand-written parts before running them and
 *   rejects any it cannot prove reads only those names. The check catches honest mistakes, not
 *   hostile SQL: metric code is trusted code; request input only ever arrives as values;
 * - a condition on a `raw()` expression is written in parentheses, so an OR inside it stays
 *   within that condition and the others (the tenant's) still apply to every row;
 * - a fragment whose parentheses do not balance is refused: it could close the ones around it.
 */
import { rowBatches } from "queryserve"
import { scanPlaceholders, type SqlDialect, STANDARD_SQL } from "./sqlText.js"

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | boolean

export type Operator = "eq" | "gte" | "lte" | "gt" | "lt" | "in"

export type Direction = "asc" | "desc"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A result row: numbers a double holds exactly, larger integers and decimals as strings of their digits, dates as 'YYYY-MM-DD' (docs/databases.md, "Values"). */
export type Row = { [column: string]: Json }

export interface CompiledQuery {
  readonly sql: string
  readonly params: ReadonlyArray<SqlValue>
}

/** Hand-written SQL of a statement, and the CTE names it may read, spelled exactly so: never base tables. */
export interface ReadCheck {
  readonly sql: string
  readonly allowed: ReadonlySet<string>
}

/** One statement to run: SQL with `?` placeholders, their values, and the hand-written parts to check. */
export interface Statement extends CompiledQuery {
  readonly checks: ReadonlyArray<ReadCheck>
}

/** Runs statements on one database. */
export interface SqlDriver {
  /** How its database quotes and comments: where `?` placeholders can be. Default STANDARD_SQL. */
  readonly dialect?: SqlDialect
  /**
   * Binds `params` to the `?` placeholders in order and returns the rows as plain JSON values.
   * A driver that can parse SQL rejects a check whose SQL reads a table it does not allow (SqlGuardError).
   * When `signal` aborts, the statement stops (or never starts) and the promise rejects with `signal.reason`.
   */
  execute(statement: Statement, signal?: AbortSignal): Promise<ReadonlyArray<Row>>
  /**
   * The same rows, batch by batch as the database hands them over (a DuckDB chunk, a cursor's
   * FETCH, a part of the ClickHouse stream), never the whole result at once. The next batch is read
   * only when the previous one was taken. Ending the iteration early (`return()`) stops the query
   * and frees its connection; `signal` aborting stops it too, failing with `signal.reason`.
   */
  stream(statement: Statement, signal?: AbortSignal): AsyncIterable<ReadonlyArray<Row>>
}

/**
 * Thrown when hand-written SQL could read a base table around `db.table()` (or the guard cannot
 * tell), is not one SELECT, or ends inside quotes or a comment (which would swallow the SQL the
 * builder appends).
 */
export class SqlGuardError extends Error {
  override readonly name = "SqlGuardError"
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * A `db.with()` key. The key is written quoted, so its case is kept; SQL reading it names it
 * unquoted. Postgres folds an unquoted `Orders` to `orders`, ClickHouse matches names
 * case-sensitively, DuckDB ignores case: only a lower-case key is the same CTE on all three,
 * and any other could leave the body reading the base table of that name on some of them.
 */
const LOWER_CASE_NAME = /^[a-z_][a-z0-9_]*$/

/**
 * A SQL fragment written by the developer, with its own `?` parameters. Its placeholders are
 * counted when a query is compiled for a driver, in that driver's dialect.
 */
export class RawSql {
  constructor(
    readonly sql: string,
    readonly params: ReadonlyArray<SqlValue> = []
  ) {
    params.forEach(assertValue)
  }
}

export const raw = (sql: string, params: ReadonlyArray<SqlValue> = []): RawSql => new RawSql(sql, params)

/** A column name (checked against IDENTIFIER) or a raw expression. */
export type Expr = string | RawSql

export interface Query {
  toSQL(): CompiledQuery
  /** Runs the query; the caller states the row shape it selected. `signal` cancels it (see SqlDriver). */
  execute<T extends Row = Row>(signal?: AbortSignal): Promise<Array<T>>
  /** Runs the query and gives its rows one by one as the driver streams them (see SqlDriver.stream). */
  stream<T extends Row = Row>(signal?: AbortSignal): AsyncGenerator<T, void, undefined>
}

export interface TableQuery extends Query {
  readonly tableName: string
  /** Adds output columns; no call means `*`. */
  select(...columns: Array<Expr>): TableQuery
  /** Adds a condition, ANDed with the earlier ones; one on a raw expression is parenthesized. */
  where(column: Expr, op: "in", values: ReadonlyArray<SqlValue>): TableQuery
  where(column: Expr, op: Exclude<Operator, "in">, value: SqlValue): TableQuery
  groupBy(...columns: Array<Expr>): TableQuery
  orderBy(column: Expr, direction?: Direction): TableQuery
  limit(count: number): TableQuery
}

/** A `db.with()` source: a builder or query, or a raw stage reading earlier sources. */
export type Source = Query | RawSql

export interface Db {
  /** The SQL dialect of the database behind it, for the few metrics whose SQL differs. */
  readonly dialect: SqlDialect
  table(name: string): TableQuery
  /**
   * `WITH key AS (source), ... body`. Each key shadows the base table of the same name, a raw
   * stage may read only earlier keys, and the body only keys. Keys must be lower-case names,
   * spelled the same in the SQL that reads them; another key throws here.
   */
  with(sources: Readonly<Record<string, Source>>, body: string | RawSql): Query
}

const isValue = (value: unknown): value is SqlValue =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

function assertValue(value: unknown): asserts value is SqlValue {
  if (!isValue(value)) throw new TypeError(`SQL values must be strings, finite numbers or booleans, got ${String(value)}`)
}

const checkedName = (name: string): string => {
  if (!IDENTIFIER.test(name)) throw new Error(`Invalid SQL identifier: ${JSON.stringify(name)}`)
  return name
}

const checkedExpr = (expr: Expr): Expr => {
  if (typeof expr === "string") checkedName(expr)
  return expr
}

const identifier = (name: string): string => `"${checkedName(name)}"`

const assertKey = (key: string): void => {
  if (LOWER_CASE_NAME.test(key)) return
  throw new Error(
    `db.with() key ${JSON.stringify(key)} must be a lower-case name (a-z, 0-9, _): Postgres folds unquoted names to ` +
      `lower case and ClickHouse matches them case-sensitively, so SQL naming it could read the base table instead`
  )
}

const NO_TABLES: ReadonlySet<string> = new Set()

/** Accumulates SQL text and its parameters in textual order, as `?` placeholders require. */
class SqlWriter {
  readonly parts: Array<string> = []
  readonly params: Array<SqlValue> = []
  readonly checks: Array<ReadCheck> = []

  constructor(private readonly dialect: SqlDialect) {}

  text(sql: string): this {
    this.parts.push(sql)
    return this
  }

  value(value: SqlValue): this {
    this.parts.push("?")
    this.params.push(value)
    return this
  }

  /** Appends SQL that carries its own parameters, already checked: a compiled subquery or fragment. */
  append(part: CompiledQuery): this {
    this.parts.push(part.sql)
    this.params.push(...part.params)
    return this
  }

  /** Appends a hand-written fragment once its placeholders match its values, read in the driver's dialect. */
  fragment({ sql, params }: RawSql): this {
    const { offsets, closed, balanced } = scanPlaceholders(sql, this.dialect)
    if (offsets.length !== params.length) {
      throw new Error(`raw SQL has ${offsets.length} placeholder(s) but ${params.length} param(s) in ${this.dialect.name} SQL: ${sql}`)
    }
    if (!closed) throw new SqlGuardError(`raw SQL ends inside quotes or a comment in ${this.dialect.name} SQL: ${sql}`)
    if (!balanced) throw new SqlGuardError(`raw SQL has parentheses that do not balance in ${this.dialect.name} SQL: ${sql}`)
    return this.append({ sql, params })
  }

  expr(expr: Expr): this {
    if (typeof expr === "string") return this.text(identifier(expr))
    // Checked as a select-list expression: a fragment must not read any table.
    this.checks.push({ sql: `SELECT ${expr.sql}`, allowed: NO_TABLES })
    return this.fragment(expr)
  }

  list(exprs: ReadonlyArray<Expr>): this {
    exprs.forEach((expr, i) => (i === 0 ? this.expr(expr) : this.text(", ").expr(expr)))
    return this
  }

  statement(): Statement {
    return { sql: this.parts.join(""), params: this.params, checks: this.checks }
  }
}

const COMPARISONS: Readonly<Record<Exclude<Operator, "in">, string>> = {
  eq: "=",
  gte: ">=",
  lte: "<=",
  gt: ">",
  lt: "<"
}

type Condition =
  | { readonly column: Expr; readonly op: "in"; readonly values: ReadonlyArray<SqlValue> }
  | { readonly column: Expr; readonly op: Exclude<Operator, "in">; readonly value: SqlValue }

interface TableState {
  readonly table: string
  readonly columns: ReadonlyArray<Expr>
  readonly conditions: ReadonlyArray<Condition>
  readonly groups: ReadonlyArray<Expr>
  readonly orders: ReadonlyArray<{ readonly expr: Expr; readonly direction: Direction }>
  readonly limit: number | undefined
}

const writeComparison = (out: SqlWriter, condition: Condition): void => {
  if (condition.op !== "in") {
    out.expr(condition.column).text(` ${COMPARISONS[condition.op]} `).value(condition.value)
    return
  }
  // `x IN ()` is not SQL; an empty set matches nothing.
  if (condition.values.length === 0) {
    out.text("FALSE")
    return
  }
  out.expr(condition.column).text(" IN (")
  condition.values.forEach((v, i) => (i === 0 ? out.value(v) : out.text(", ").value(v)))
  out.text(")")
}

/**
 * Conditions are joined with AND, which binds tighter than OR: unparenthesized, a raw `a OR b`
 * would turn `tenant AND a OR b >= ?` into two alternatives, the second one for every tenant.
 */
const writeCondition = (out: SqlWriter, condition: Condition): void => {
  if (typeof condition.column === "string") return writeComparison(out, condition)
  out.text("(")
  writeComparison(out, condition)
  out.text(")")
}

abstract class BaseQuery implements Query {
  constructor(protected readonly driver: SqlDriver) {}

  protected writer(): SqlWriter {
    return new SqlWriter(this.driver.dialect ?? STANDARD_SQL)
  }

  /** SQL, params, and the hand-written parts to check before running. */
  abstract compile(): Statement

  toSQL(): CompiledQuery {
    const { sql, params } = this.compile()
    return { sql, params }
  }

  async execute<T extends Row = Row>(signal?: AbortSignal): Promise<Array<T>> {
    // The caller names the columns it selected.
    return (await this.driver.execute(this.compile(), signal)) as Array<T>
  }

  stream<T extends Row = Row>(signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    // Served as batches: queryserve checks and writes a batch's rows without a turn per row.
    return rowBatches(this.driver.stream(this.compile(), signal) as AsyncIterable<ReadonlyArray<T>>)
  }
}

class TableQueryImpl extends BaseQuery implements TableQuery {
  constructor(
    driver: SqlDriver,
    private readonly state: TableState
  ) {
    super(driver)
  }

  get tableName(): string {
    return this.state.table
  }

  private next(change: Partial<TableState>): TableQueryImpl {
    return new TableQueryImpl(this.driver, { ...this.state, ...change })
  }

  select(...columns: Array<Expr>): TableQuery {
    return this.next({ columns: [...this.state.columns, ...columns.map(checkedExpr)] })
  }

  where(column: Expr, op: Operator, value: SqlValue | ReadonlyArray<SqlValue>): TableQuery {
    // Checked at run time too: the tenant wrapper and other JS callers are not type-checked.
    checkedExpr(column)
    let condition: Condition
    if (op === "in") {
      if (!Array.isArray(value) || !value.every(isValue)) {
        throw new TypeError(`where(..., 'in', values) needs an array of strings, finite numbers or booleans`)
      }
      condition = { column, op, values: value }
    } else {
      if (!Object.hasOwn(COMPARISONS, op)) throw new TypeError(`Unknown operator: ${String(op)}`)
      assertValue(value)
      condition = { column, op, value }
    }
    return this.next({ conditions: [...this.state.conditions, condition] })
  }

  groupBy(...columns: Array<Expr>): TableQuery {
    return this.next({ groups: [...this.state.groups, ...columns.map(checkedExpr)] })
  }

  orderBy(column: Expr, direction: Direction = "asc"): TableQuery {
    if (direction !== "asc" && direction !== "desc") throw new TypeError(`Unknown direction: ${String(direction)}`)
    return this.next({ orders: [...this.state.orders, { expr: checkedExpr(column), direction }] })
  }

  limit(count: number): TableQuery {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`limit must be a non-negative integer, got ${count}`)
    return this.next({ limit: count })
  }

  compile(): Statement {
    const { table, columns, conditions, groups, orders, limit } = this.state
    const out = this.writer().text("SELECT ")
    if (columns.length === 0) out.text("*")
    else out.list(columns)
    out.text(` FROM ${identifier(table)}`)
    conditions.forEach((condition, i) => {
      out.text(i === 0 ? " WHERE " : " AND ")
      writeCondition(out, condition)
    })
    if (groups.length > 0) out.text(" GROUP BY ").list(groups)
    orders.forEach(({ expr, direction }, i) => {
      out.text(i === 0 ? " ORDER BY " : ", ").expr(expr).text(direction === "desc" ? " DESC" : " ASC")
    })
    if (limit !== undefined) out.text(" LIMIT ").value(limit)
    return out.statement()
  }
}

class WithQuery extends BaseQuery {
  constructor(
    driver: SqlDriver,
    private readonly sources: Readonly<Record<string, Source>>,
    private readonly body: RawSql
  ) {
    super(driver)
    // At definition, so the mistake shows on every engine, not only where it would leak.
    Object.keys(sources).forEach(assertKey)
  }

  compile(): Statement {
    const out = this.writer()
    const visible = new Set<string>()
    for (const [name, source] of Object.entries(this.sources)) {
      out.text(visible.size === 0 ? "WITH " : ", ").text(`${identifier(name)} AS (`)
      if (source instanceof RawSql) {
        out.checks.push({ sql: source.sql, allowed: new Set(visible) })
        out.fragment(source)
      } else if (source instanceof BaseQuery) {
        const inner = source.compile()
        out.checks.push(...inner.checks)
        out.append(inner)
      } else {
        throw new TypeError(`Source "${name}" must come from db.table(), db.with() or raw()`)
      }
      out.text(")\n")
      visible.add(name)
    }
    out.checks.push({ sql: this.body.sql, allowed: visible })
    return out.fragment(this.body).statement()
  }
}

/**
 * The query entry point handed to metrics. A plain object without `this`, so a wrapper may
 * spread it or proxy it and replace `table`.
 */
export const createDb = (driver: SqlDriver): Db => ({
  dialect: driver.dialect ?? STANDARD_SQL,
  table: (name) =>
    new TableQueryImpl(driver, {
      table: checkedName(name),
      columns: [],
      conditions: [],
      groups: [],
      orders: [],
      limit: undefined
    }),
  with: (sources, body) => new WithQuery(driver, sources, typeof body === "string" ? raw(body) : body)
})
