/**
 * Table sources of every shape auto-inject must handle, over one array of rows: a builder whose
 * `where(column, 'eq', value)` calls are ANDed and whose `execute()` returns the matching rows.
 */

export type Row = Readonly<Record<string, string | number>>

export class RowsQuery {
  constructor(
    private readonly rows: ReadonlyArray<Row>,
    private readonly filters: ReadonlyArray<readonly [string, unknown]> = []
  ) {}

  where(column: string, _operator: "eq", value: unknown): RowsQuery {
    return new RowsQuery(this.rows, [...this.filters, [column, value]])
  }

  execute(): Promise<Array<Row>> {
    return Promise.resolve(this.rows.filter((row) => this.filters.every(([column, value]) => row[column] === value)))
  }
}

/** A table source: each shape exposes `table(name)` (or is called) to make a RowsQuery. */
export type Source = unknown

/** Class with `#private` state read by `table`, and a helper that goes through `this.table()`. */
class Warehouse {
  readonly #tables: Readonly<Record<string, ReadonlyArray<Row>>>
  constructor(tables: Readonly<Record<string, ReadonlyArray<Row>>>) {
    this.#tables = tables
  }
  table(name: string): RowsQuery {
    return new RowsQuery(this.#tables[name] ?? [])
  }
  orders(): RowsQuery {
    return this.table("orders")
  }
  /** Reads the rows around `table()`: run against the original, it would leak every tenant's rows. */
  allOrders(): RowsQuery {
    return new RowsQuery(this.#tables.orders ?? [])
  }
  get dialect(): string {
    return `rows:${Object.keys(this.#tables).length}`
  }
}

/** Class whose `table` is an accessor that returns the function (and needs `#private` state). */
class AccessorWarehouse {
  readonly #tables: Readonly<Record<string, ReadonlyArray<Row>>>
  constructor(tables: Readonly<Record<string, ReadonlyArray<Row>>>) {
    this.#tables = tables
  }
  get table(): (name: string) => RowsQuery {
    return (name) => new RowsQuery(this.#tables[name] ?? [])
  }
}

export interface Shapes {
  readonly [shape: string]: Source
}

/** Every shape that must be filtered, built over the same tables. */
export const filteredShapes = (tables: Readonly<Record<string, ReadonlyArray<Row>>>): Shapes => {
  const table = (name: string) => new RowsQuery(tables[name] ?? [])
  // Knex-style: the handle is a function that makes a builder, and has `table` too.
  const callable = Object.assign((name: string) => table(name), { table })
  const inheritedProto = { table }
  return {
    plain: { table },
    callable,
    class: new Warehouse(tables),
    accessor: new AccessorWarehouse(tables),
    frozen: Object.freeze({ table, label: "frozen" }),
    frozenClass: Object.freeze(new Warehouse(tables)),
    frozenCallable: Object.freeze(Object.assign((name: string) => table(name), { table })),
    inherited: Object.create(inheritedProto) as object
  }
}

/** Contexts auto-inject cannot see through: every request to them must be refused. */
export const refusedContexts = (tables: Readonly<Record<string, ReadonlyArray<Row>>>): Readonly<Record<string, Readonly<Record<string, unknown>>>> => {
  const db = { table: (name: string) => new RowsQuery(tables[name] ?? []) }
  return {
    nested: { services: { db } },
    promise: { db: Promise.resolve(db) },
    nestedBesideATopLevelOne: { db, admin: { db } },
    noTableSource: { label: "nothing to filter" },
    tableNotAFunction: { db: { table: "orders" } },
    noWhere: { db: { table: () => ({ execute: () => Promise.resolve([...(tables.orders ?? [])]) }) } }
  }
}
