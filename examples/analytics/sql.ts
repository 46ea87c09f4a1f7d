/**
 * A small immutable query builder over a DuckDB connection, shaped so that tenant isolation
 * can be added from outside: the runtime's 'auto-inject' mode wraps `db.table(name)` so every
 * builder it returns already carries `.where(tenantColumn, 'eq', tenantId)`.
 *
 * For that to hold for every query, base tables are reachable only through `db.table()`:
 * - values are always bound parameters; identifiers must match IDENTIFIER or be `raw()` fragments;
 * - hand-written SQL (`raw()` fragments and `db.with()` stages and bodies) is parsed before
 *   execution and rejected if it names a base table; `db.with()` exposes builders as CTEs
 *   named after their keys, so complex queries read only the rows their builders select.
 * The guard catches honest mistakes, not hostile SQL: table functions such as query_table()
 * are not inspected. Metric code is trusted code; request input only ever arrives as values.
 */
import {
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  doubleFromDecimalValue,
  type DuckDBConnection,
  type DuckDBValueConverter,
  type Json,
} from '@duckdb/node-api';

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | boolean;

export type Operator = 'eq' | 'gte' | 'lte' | 'gt' | 'lt' | 'in';

export type Direction = 'asc' | 'desc';

/** A result row: BIGINT and DECIMAL arrive as numbers, DATE as 'YYYY-MM-DD'. */
export type Row = { [column: string]: Json };

export interface CompiledQuery {
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A SQL fragment written by the developer, with its own `?` parameters. */
export class RawSql {
  constructor(
    readonly sql: string,
    readonly params: readonly SqlValue[] = [],
  ) {
    const placeholders = sql.replace(/'(?:[^']|'')*'/g, '').split('?').length - 1;
    if (placeholders !== params.length) {
      throw new Error(`raw SQL has ${placeholders} placeholder(s) but ${params.length} param(s): ${sql}`);
    }
    params.forEach(assertValue);
  }
}

export const raw = (sql: string, params: readonly SqlValue[] = []): RawSql => new RawSql(sql, params);

/** A column name (checked against IDENTIFIER) or a raw expression. */
export type Expr = string | RawSql;

function checkedExpr(expr: Expr): Expr {
  if (typeof expr === 'string') checkedName(expr);
  return expr;
}

export interface Query {
  toSQL(): CompiledQuery;
  /** Runs the query; the caller states the row shape it selected. */
  execute<T extends Row = Row>(): Promise<T[]>;
}

export interface TableQuery extends Query {
  readonly tableName: string;
  /** Adds output columns; no call means `*`. */
  select(...columns: Expr[]): TableQuery;
  /** Adds a condition, ANDed with the earlier ones. */
  where(column: Expr, op: 'in', values: readonly SqlValue[]): TableQuery;
  where(column: Expr, op: Exclude<Operator, 'in'>, value: SqlValue): TableQuery;
  groupBy(...columns: Expr[]): TableQuery;
  orderBy(column: Expr, direction?: Direction): TableQuery;
  limit(count: number): TableQuery;
}

/** A `db.with()` source: a builder or query, or a raw stage reading earlier sources. */
export type Source = Query | RawSql;

export interface Db {
  table(name: string): TableQuery;
  /**
   * `WITH key AS (source), ... body`. Each key shadows the base table of the same name, a raw
   * stage may read only earlier keys, and the body only keys.
   */
  with(sources: Readonly<Record<string, Source>>, body: string | RawSql): Query;
}

/** Thrown when hand-written SQL would read a base table around `db.table()`, or is not one statement. */
export class SqlGuardError extends Error {
  override readonly name = 'SqlGuardError';
}

interface Check {
  readonly sql: string;
  /** Lower-case table names the SQL may read: CTE names, never base tables. */
  readonly allowed: ReadonlySet<string>;
}

interface Compiled extends CompiledQuery {
  readonly checks: readonly Check[];
}

const isValue = (value: unknown): value is SqlValue =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

function assertValue(value: unknown): asserts value is SqlValue {
  if (!isValue(value)) throw new TypeError(`SQL values must be strings, finite numbers or booleans, got ${String(value)}`);
}

function checkedName(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`Invalid SQL identifier: ${JSON.stringify(name)}`);
  return name;
}

const identifier = (name: string): string => `"${checkedName(name)}"`;

const NO_TABLES: ReadonlySet<string> = new Set();

/** Accumulates SQL text and its parameters in textual order, as `?` placeholders require. */
class SqlWriter {
  readonly parts: string[] = [];
  readonly params: SqlValue[] = [];
  readonly checks: Check[] = [];

  text(sql: string): this {
    this.parts.push(sql);
    return this;
  }

  value(value: SqlValue): this {
    this.parts.push('?');
    this.params.push(value);
    return this;
  }

  /** Appends SQL that carries its own parameters: a raw fragment or a compiled subquery. */
  append(part: CompiledQuery): this {
    this.parts.push(part.sql);
    this.params.push(...part.params);
    return this;
  }

  expr(expr: Expr): this {
    if (typeof expr === 'string') return this.text(identifier(expr));
    // Checked as a select-list expression: a fragment must not read any table.
    this.checks.push({ sql: `SELECT ${expr.sql}`, allowed: NO_TABLES });
    return this.append(expr);
  }

  list(exprs: readonly Expr[]): this {
    exprs.forEach((expr, i) => (i === 0 ? this.expr(expr) : this.text(', ').expr(expr)));
    return this;
  }

  compiled(): Compiled {
    return { sql: this.parts.join(''), params: this.params, checks: this.checks };
  }
}

const COMPARISONS: Readonly<Record<Exclude<Operator, 'in'>, string>> = {
  eq: '=',
  gte: '>=',
  lte: '<=',
  gt: '>',
  lt: '<',
};

type Condition =
  | { readonly column: Expr; readonly op: 'in'; readonly values: readonly SqlValue[] }
  | { readonly column: Expr; readonly op: Exclude<Operator, 'in'>; readonly value: SqlValue };

interface TableState {
  readonly table: string;
  readonly columns: readonly Expr[];
  readonly conditions: readonly Condition[];
  readonly groups: readonly Expr[];
  readonly orders: readonly { readonly expr: Expr; readonly direction: Direction }[];
  readonly limit: number | undefined;
}

function writeCondition(out: SqlWriter, condition: Condition): void {
  if (condition.op !== 'in') {
    out.expr(condition.column).text(` ${COMPARISONS[condition.op]} `).value(condition.value);
    return;
  }
  // `x IN ()` is not SQL; an empty set matches nothing.
  if (condition.values.length === 0) {
    out.text('FALSE');
    return;
  }
  out.expr(condition.column).text(' IN (');
  condition.values.forEach((v, i) => (i === 0 ? out.value(v) : out.text(', ').value(v)));
  out.text(')');
}

abstract class BaseQuery implements Query {
  constructor(protected readonly connection: DuckDBConnection) {}

  /** SQL, params, and the hand-written parts to check before running. */
  abstract compile(): Compiled;

  toSQL(): CompiledQuery {
    const { sql, params } = this.compile();
    return { sql, params };
  }

  async execute<T extends Row = Row>(): Promise<T[]> {
    const { sql, params, checks } = this.compile();
    for (const check of checks) await assertReadsOnly(this.connection, check);
    // prepare() also refuses more than one statement.
    const prepared = await this.connection.prepare(sql);
    try {
      prepared.bind([...params]);
      const reader = await prepared.runAndReadAll();
      // The caller names the columns it selected; rows are plain JSON-safe objects.
      return reader.convertRowObjects(toJson) as T[];
    } finally {
      prepared.destroySync();
    }
  }
}

class TableQueryImpl extends BaseQuery implements TableQuery {
  constructor(
    connection: DuckDBConnection,
    private readonly state: TableState,
  ) {
    super(connection);
  }

  get tableName(): string {
    return this.state.table;
  }

  private next(change: Partial<TableState>): TableQueryImpl {
    return new TableQueryImpl(this.connection, { ...this.state, ...change });
  }

  select(...columns: Expr[]): TableQuery {
    return this.next({ columns: [...this.state.columns, ...columns.map(checkedExpr)] });
  }

  where(column: Expr, op: Operator, value: SqlValue | readonly SqlValue[]): TableQuery {
    // Checked at run time too: the tenant wrapper and other JS callers are not type-checked.
    checkedExpr(column);
    let condition: Condition;
    if (op === 'in') {
      if (!Array.isArray(value) || !value.every(isValue)) {
        throw new TypeError(`where(..., 'in', values) needs an array of strings, finite numbers or booleans`);
      }
      condition = { column, op, values: value };
    } else {
      if (!Object.hasOwn(COMPARISONS, op)) throw new TypeError(`Unknown operator: ${String(op)}`);
      assertValue(value);
      condition = { column, op, value };
    }
    return this.next({ conditions: [...this.state.conditions, condition] });
  }

  groupBy(...columns: Expr[]): TableQuery {
    return this.next({ groups: [...this.state.groups, ...columns.map(checkedExpr)] });
  }

  orderBy(column: Expr, direction: Direction = 'asc'): TableQuery {
    if (direction !== 'asc' && direction !== 'desc') throw new TypeError(`Unknown direction: ${String(direction)}`);
    return this.next({ orders: [...this.state.orders, { expr: checkedExpr(column), direction }] });
  }

  limit(count: number): TableQuery {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`limit must be a non-negative integer, got ${count}`);
    return this.next({ limit: count });
  }

  compile(): Compiled {
    const { table, columns, conditions, groups, orders, limit } = this.state;
    const out = new SqlWriter().text('SELECT ');
    if (columns.length === 0) out.text('*');
    else out.list(columns);
    out.text(` FROM ${identifier(table)}`);
    conditions.forEach((condition, i) => {
      out.text(i === 0 ? ' WHERE ' : ' AND ');
      writeCondition(out, condition);
    });
    if (groups.length > 0) out.text(' GROUP BY ').list(groups);
    orders.forEach(({ expr, direction }, i) => {
      out.text(i === 0 ? ' ORDER BY ' : ', ').expr(expr).text(direction === 'desc' ? ' DESC' : ' ASC');
    });
    if (limit !== undefined) out.text(' LIMIT ').value(limit);
    return out.compiled();
  }
}

class WithQuery extends BaseQuery {
  constructor(
    connection: DuckDBConnection,
    private readonly sources: Readonly<Record<string, Source>>,
    private readonly body: RawSql,
  ) {
    super(connection);
  }

  compile(): Compiled {
    const out = new SqlWriter();
    const visible = new Set<string>();
    for (const [name, source] of Object.entries(this.sources)) {
      out.text(visible.size === 0 ? 'WITH ' : ', ').text(`${identifier(name)} AS (`);
      if (source instanceof RawSql) {
        out.checks.push({ sql: source.sql, allowed: new Set(visible) });
        out.append(source);
      } else if (source instanceof BaseQuery) {
        const inner = source.compile();
        out.checks.push(...inner.checks);
        out.append(inner);
      } else {
        throw new TypeError(`Source "${name}" must come from db.table(), db.with() or raw()`);
      }
      out.text(')\n');
      visible.add(name.toLowerCase());
    }
    out.checks.push({ sql: this.body.sql, allowed: visible });
    return out.append(this.body).compiled();
  }
}

// getTableNames(sql, true) lists base-table references as `name` or `name AS alias`,
// qualified ones as `schema.name`; names defined by the SQL's own CTEs are left out.
const TABLE_REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?: AS .*)?$/s;

async function assertReadsOnly(connection: DuckDBConnection, { sql, allowed }: Check): Promise<void> {
  // getTableNames() returns nothing for SQL it cannot parse, so parse first; this throws.
  const statements = await connection.extractStatements(sql);
  if (statements.count !== 1) throw new SqlGuardError(`Expected one SQL statement: ${sql}`);
  for (const reference of connection.getTableNames(sql, true)) {
    const name = TABLE_REFERENCE.exec(reference)?.[1]?.toLowerCase();
    if (name === undefined || !allowed.has(name)) {
      throw new SqlGuardError(
        `SQL reads table "${reference}" directly; read tables through db.table() builders passed as db.with() sources: ${sql}`,
      );
    }
  }
}

const toJson: DuckDBValueConverter<Json> = (value, type, converter) => {
  if (value === null) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return Number(value);
    case DuckDBTypeId.DECIMAL:
      return doubleFromDecimalValue(value);
    case DuckDBTypeId.DATE:
      return String(value);
    default:
      return JsonDuckDBValueConverter(value, type, converter);
  }
};

/**
 * The query entry point handed to metrics. A plain object without `this`, so a wrapper may
 * spread it or proxy it and replace `table`.
 */
export function createDb(connection: DuckDBConnection): Db {
  return {
    table: (name) =>
      new TableQueryImpl(connection, {
        table: checkedName(name),
        columns: [],
        conditions: [],
        groups: [],
        orders: [],
        limit: undefined,
      }),
    with: (sources, body) => new WithQuery(connection, sources, typeof body === 'string' ? raw(body) : body),
  };
}
