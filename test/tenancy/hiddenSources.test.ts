/**
 * Regression: auto-inject looked for a hidden table source only one level into plain objects and
 * arrays, so one two levels down, in a class instance or in a Map ran unfiltered; and the wrapper's
 * getOwnPropertyDescriptor and getPrototypeOf handed out the original `table`. Now every ctx value is
 * searched (bounded, refused at the bound) and every way the wrapper exposes `table` is filtered.
 */
import { apiKeyAuth, defineServe, type ServeAuthContext, type ServeRequest, TenantScopeError } from "queryserve"
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest"
import { type Row, RowsQuery } from "./support/rowsTable.js"

const ORDERS: ReadonlyArray<Row> = [
  { id: 1, tenant_id: "acme", amount: 100 },
  { id: 2, tenant_id: "globex", amount: 250 },
  { id: 3, tenant_id: "acme", amount: 75 }
]
const ACME = ORDERS.filter((row) => row.tenant_id === "acme")
const callers: Record<string, ServeAuthContext> = { "key-acme": { tenantId: "acme" } }

type Table = (name: string) => RowsQuery
interface Source {
  readonly table: Table
}
const table: Table = () => new RowsQuery(ORDERS)
const db: Source = { table }

type Ctx = Readonly<Record<string, unknown>>
type Handler = (ctx: Ctx) => unknown

/** One endpoint over `context`; its handler gets the (scoped) ctx. */
const apiOver = (context: Ctx, handler: Handler = (ctx) => (ctx.db as Source).table("orders").execute()) => {
  const errors: Array<unknown> = []
  const api = defineServe({
    auth: apiKeyAuth({ keys: callers }),
    tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
    context,
    hooks: { onError: ({ error }) => void errors.push(error) },
    queries: { orders: ({ ctx }: { ctx: Ctx }) => handler(ctx) }
  })
  return { api, errors }
}

const request: ServeRequest = { method: "GET", path: "/api/analytics/orders", headers: { "x-api-key": "key-acme" } }

const answer = async (context: Ctx, handler?: Handler) => {
  const { api, errors } = apiOver(context, handler)
  const response = await api.handler(request)
  return { status: response.status, body: JSON.parse(response.body ?? "null") as unknown, errors }
}

describe("auto-inject refuses a table source or promise anywhere inside a ctx value", () => {
  let logged: MockInstance<typeof console.error>
  beforeEach(() => {
    logged = vi.spyOn(console, "error").mockImplementation(() => {})
  })
  afterEach(() => logged.mockRestore())

  class OrderService {
    constructor(readonly db: Source) {}
  }
  class Jobs {
    readonly pending = [Promise.resolve(db)]
  }
  const callable = Object.assign((name: string) => table(name), { table })

  const cases: Readonly<Record<string, readonly [Ctx, RegExp]>> = {
    "two levels down in plain objects": [{ db, repos: { sales: { db } } }, /ctx\.repos\.sales\.db is a table source inside ctx\.repos;/],
    "two levels down in arrays": [{ db, pools: [[db]] }, /ctx\.pools\[0\]\[0\] is a table source/],
    "an array of plain objects": [{ db, shards: [{ db }] }, /ctx\.shards\[0\]\.db is a table source/],
    "a class instance's own field": [{ db, orders: new OrderService(db) }, /ctx\.orders\.db is a table source inside ctx\.orders/],
    "a Map value": [{ db, sources: new Map([["main", db]]) }, /ctx\.sources\.get\("main"\) is a table source/],
    "a Map key": [{ db, byHandle: new Map([[db, "main"]]) }, /ctx\.byHandle \(a Map key\) is a table source/],
    "a Set entry": [{ db, all: new Set([db]) }, /ctx\.all \(a Set entry\) is a table source/],
    "a callable source, nested": [{ db, knexes: { main: callable } }, /ctx\.knexes\.main is a table source/],
    "a promise in a class instance": [{ db, jobs: new Jobs() }, /ctx\.jobs\.pending\[0\] is a promise/],
    "the only source, nested deep": [{ services: { a: { b: { db } } } }, /ctx\.services\.a\.b\.db is a table source/]
  }

  it.each(Object.keys(cases))("%s: 500, TenantScopeError naming the path", async (name) => {
    const [context, cause] = cases[name]!
    const { status, body, errors } = await answer(context)
    expect(status).toBe(500)
    expect(body).toEqual({ error: { type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" } })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(TenantScopeError)
    expect((errors[0] as Error).message).toMatch(cause)
  })

  // Regression: these four shapes beside a top-level db let the handler read every tenant's rows.
  it.each([
    ["a non-enumerable property", () => ({ db, admin: Object.defineProperty({}, "db", { value: db, enumerable: false }) }), /ctx\.admin\.db is a table source/],
    ["a symbol-keyed property", () => ({ db, admin: { [Symbol.for("db")]: db } }), /ctx\.admin\[Symbol\(db\)\] is a table source/],
    ["a WeakRef", () => ({ db, cache: new WeakRef(db) }), /ctx\.cache\.deref\(\) is a table source/],
    ["a WeakRef inside a plain object", () => ({ db, refs: { main: new WeakRef(db) } }), /ctx\.refs\.main\.deref\(\) is a table source/],
    ["a bound table function, nested", () => ({ db, repos: { orders: db.table.bind(db) } }), /ctx\.repos\.orders is a table source/],
    ["a getter on the prototype chain", () => ({ db, admin: Object.create(Object.create({ get db() { return db } }) as object) as object }), /ctx\.admin has a getter "db" on its prototype chain/],
    ["a class getter", () => ({ db, admin: new (class Admin { get db() { return db } })() }), /ctx\.admin has a getter "db" on its prototype chain/]
  ])("%s: 500, TenantScopeError", async (_, context, cause) => {
    const { status, errors } = await answer(context())
    expect(status).toBe(500)
    expect(errors[0]).toBeInstanceOf(TenantScopeError)
    expect((errors[0] as Error).message).toMatch(cause)
  })

  it("a getter on the prototype chain is refused without being called", async () => {
    const getter = vi.fn(() => db)
    const admin = Object.create(Object.defineProperty({}, "db", { get: getter })) as object
    expect((await answer({ db, admin })).status).toBe(500)
    expect(getter).not.toHaveBeenCalled()
  })

  it("an own getter is refused without being called", async () => {
    const getter = vi.fn(() => db)
    const services = Object.defineProperty({}, "db", { get: getter, enumerable: true })
    const { status, errors } = await answer({ db, services })
    expect(status).toBe(500)
    expect((errors[0] as Error).message).toMatch(/ctx\.services\.db is a getter inside ctx\.services/)
    expect(getter).not.toHaveBeenCalled()
  })

  it("fails closed at the bounds: nesting deeper than it looks, or more objects than it walks", async () => {
    const deep = { l1: { l2: { l3: { l4: { l5: { l6: {} } } } } } }
    const deepAnswer = await answer({ db, deep })
    expect(deepAnswer.status).toBe(500)
    expect((deepAnswer.errors[0] as Error).message).toMatch(/ctx\.deep\.l1\.l2\.l3\.l4\.l5 is nested more than 4 levels/)
    const many = Array.from({ length: 300 }, (_, id) => ({ id }))
    const manyAnswer = await answer({ db, many })
    expect(manyAnswer.status).toBe(500)
    expect((manyAnswer.errors[0] as Error).message).toMatch(/more than 256 objects \(ctx\.many reached the bound\)/)
  })
})

describe("auto-inject lets through ctx values with nothing hidden", () => {
  it("data within the bounds, cycles, shared objects, bytes and class instances: filtered, 200", async () => {
    const shared = { region: "eu" }
    const cyclic: Record<string, unknown> = { name: "graph" }
    cyclic.self = cyclic
    class Settings {
      readonly limits = { rows: 100, nested: { a: { b: 1 } } }
      /** A prototype method: never run by the search. */
      expensive(): never {
        throw new Error("the search ran a prototype method")
      }
    }
    const context: Ctx = {
      db,
      tenantLabel: "orders",
      config: { a: { b: { c: { d: { e: 1 } } } }, shared, again: shared },
      cyclic,
      bytes: new Uint8Array(1_000_000),
      regions: Array.from({ length: 5_000 }, (_, index) => `region-${index}`),
      settings: new Settings(),
      lookup: new Map([["eu", shared]]),
      // Built-in getters (Map size, URL parts) are the runtime's, not the context's.
      url: new URL("https://example.com/reports?page=1"),
      hidden: Object.defineProperty({}, "note", { value: "not enumerable", enumerable: false }),
      ref: new WeakRef(shared),
      helper: () => db
    }
    expect(await answer(context)).toMatchObject({ status: 200, body: ACME, errors: [] })
  })
})

describe("auto-inject filters a source's table function given on its own", () => {
  // Regression: `db.table.bind(db)` as a top-level ctx value was no table source, and ran unfiltered.
  it.each([
    ["bound", () => db.table.bind(db)],
    ["bound twice", () => db.table.bind(db).bind(null)],
    ["unbound", () => db.table]
  ])("%s: called by the handler, it reads the caller's rows only", async (_, orders) => {
    const viaFunction: Handler = (ctx) => (ctx.orders as Table)("orders").execute()
    expect(await answer({ db, orders: orders() }, viaFunction)).toMatchObject({ status: 200, body: ACME, errors: [] })
    // Alone in the context it is the source auto-inject filters.
    expect(await answer({ orders: orders() }, viaFunction)).toMatchObject({ status: 200, body: ACME, errors: [] })
  })
})

describe("auto-inject wrapper: every reflective read of table is filtered", () => {
  const tenantsIn = (result: { status: number; body: unknown }) => {
    expect(result.status).toBe(200)
    return [...new Set((result.body as Array<Row>).map((row) => row.tenant_id))]
  }
  const descriptorTable = (source: unknown): Table => Object.getOwnPropertyDescriptor(source, "table")!.value as Table

  it("a copy made from the wrapper's own property descriptors", async () => {
    const copyOf = (ctx: Ctx) => Object.defineProperties({}, Object.getOwnPropertyDescriptors(ctx.db)) as Source
    expect(tenantsIn(await answer({ db }, (ctx) => copyOf(ctx).table("orders").execute()))).toEqual(["acme"])
  })

  it("getOwnPropertyDescriptor(ctx.db, 'table').value, also for a frozen source and an own accessor", async () => {
    const frozen = Object.freeze({ table })
    const accessor = Object.defineProperty({}, "table", { get: () => table, enumerable: true })
    for (const source of [db, frozen, accessor]) {
      expect(tenantsIn(await answer({ db: source }, (ctx) => descriptorTable(ctx.db)("orders").execute()))).toEqual(["acme"])
    }
  })

  it("an inherited table through the prototype: getPrototypeOf, __proto__, and a clone over it", async () => {
    const inherited = Object.create({ table }) as Source
    const viaPrototype: Handler = (ctx) => (Object.getPrototypeOf(ctx.db) as Source).table("orders").execute()
    const viaProto: Handler = (ctx) => ((ctx.db as { __proto__: Source }).__proto__.table("orders")).execute()
    const viaClone: Handler = (ctx) => (Object.assign(Object.create(Object.getPrototypeOf(ctx.db) as object) as object, ctx.db) as Source).table("orders").execute()
    const viaPrototypeDescriptor: Handler = (ctx) => descriptorTable(Object.getPrototypeOf(ctx.db))("orders").execute()
    for (const handler of [viaPrototype, viaProto, viaClone, viaPrototypeDescriptor]) {
      expect(tenantsIn(await answer({ db: inherited }, handler))).toEqual(["acme"])
    }
    const stable: Handler = (ctx) => Object.getPrototypeOf(ctx.db) === Object.getPrototypeOf(ctx.db)
    expect(await answer({ db: inherited }, stable)).toMatchObject({ status: 200, body: true })
  })

  it("a class source keeps its prototype: instanceof still holds", async () => {
    class Warehouse {
      table(name: string): RowsQuery {
        return table(name)
      }
    }
    const isWarehouse: Handler = (ctx) => ctx.db instanceof Warehouse && Object.getPrototypeOf(ctx.db) === Warehouse.prototype
    expect(await answer({ db: new Warehouse() }, isWarehouse)).toMatchObject({ status: 200, body: true })
    expect(tenantsIn(await answer({ db: new Warehouse() }))).toEqual(["acme"])
  })
})
