/**
 * Regression: auto-inject wrapped only `typeof value === "object"` values by assigning `table`, so a
 * callable handle (Knex-style), a class whose `table` is an accessor, a handle nested one level down or
 * behind a promise read every tenant's rows, and a frozen handle gave a 500. It now wraps any table
 * source without touching it, and refuses (500, logged) whatever it cannot filter.
 */
import { apiKeyAuth, defineServe, type ServeAuthContext, type ServeRequest, TenantScopeError } from "queryserve"
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest"
import { filteredShapes, refusedContexts, type Row, RowsQuery } from "./support/rowsTable.js"

const ORDERS: ReadonlyArray<Row> = [
  { id: 1, tenant_id: "acme", amount: 100 },
  { id: 2, tenant_id: "globex", amount: 250 },
  { id: 3, tenant_id: "acme", amount: 75 },
  { id: 4, tenant_id: "initech", amount: 5 }
]
const TABLES = { orders: ORDERS }
const ownRows = (tenant: string) => ORDERS.filter((row) => row.tenant_id === tenant)

const callers: Record<string, ServeAuthContext> = {
  "key-acme": { tenantId: "acme" },
  "key-globex": { tenantId: "globex" }
}

const get = (key: string, apiKey: string): ServeRequest => ({ method: "GET", path: `/api/analytics/${key}`, headers: { "x-api-key": apiKey } })

type Builder = { execute(): Promise<Array<Row>> }
type Ctx = {
  readonly db: { table(name: string): Builder } & ((name: string) => Builder) & { orders(): Builder; allOrders(): Builder; dialect: string }
}

const apiOver = (context: Readonly<Record<string, unknown>>, onError?: (error: unknown) => void) =>
  defineServe({
    auth: apiKeyAuth({ keys: callers }),
    tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
    context,
    hooks: onError === undefined ? {} : { onError: ({ error }) => onError(error) },
    queries: {
      viaTable: ({ ctx }: { ctx: Ctx }) => ctx.db.table("orders").execute(),
      viaCall: ({ ctx }: { ctx: Ctx }) => ctx.db("orders").execute(),
      viaHelper: ({ ctx }: { ctx: Ctx }) => ctx.db.orders().execute(),
      aroundTable: ({ ctx }: { ctx: Ctx }) => ctx.db.allOrders().execute(),
      dialect: ({ ctx }: { ctx: Ctx }) => ctx.db.dialect
    }
  })

const rowsOf = async (api: ReturnType<typeof apiOver>, key: string, apiKey: string) => {
  const response = await api.handler(get(key, apiKey))
  return { status: response.status, body: JSON.parse(response.body ?? "null") as unknown }
}

describe("auto-inject filters every shape of table source", () => {
  const shapes = filteredShapes(TABLES)

  it.each(Object.keys(shapes))("%s: each tenant reads exactly its own rows", async (shape) => {
    const api = apiOver({ db: shapes[shape] })
    for (const tenant of ["acme", "globex"]) {
      expect(await rowsOf(api, "viaTable", `key-${tenant}`)).toEqual({ status: 200, body: ownRows(tenant) })
    }
  })

  it("a callable handle called directly is filtered like table()", async () => {
    for (const shape of ["callable", "frozenCallable"]) {
      const api = apiOver({ db: shapes[shape] })
      expect(await rowsOf(api, "viaCall", "key-globex")).toEqual({ status: 200, body: ownRows("globex") })
    }
  })

  it("a class's helper that calls this.table() is filtered, and its getters still read #private state", async () => {
    for (const shape of ["class", "frozenClass"]) {
      const api = apiOver({ db: shapes[shape] })
      expect(await rowsOf(api, "viaHelper", "key-acme")).toEqual({ status: 200, body: ownRows("acme") })
      expect(await rowsOf(api, "dialect", "key-acme")).toEqual({ status: 200, body: "rows:1" })
    }
  })

  it("a method that reads #private state around table() fails (500) instead of running unfiltered", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const api = apiOver({ db: shapes.class })
      const { status } = await rowsOf(api, "aroundTable", "key-acme")
      expect(status).toBe(500)
    } finally {
      errors.mockRestore()
    }
  })

  it("never changes the original value: it stays frozen, with its own table, usable unfiltered elsewhere", async () => {
    const plain = { table: (_name: string) => new RowsQuery(ORDERS) }
    const originalTable = plain.table
    const frozen = shapes.frozen as { table: unknown }
    const frozenTable = frozen.table
    for (const db of [plain, frozen]) {
      const api = apiOver({ db })
      expect((await rowsOf(api, "viaTable", "key-acme")).status).toBe(200)
    }
    expect(plain.table).toBe(originalTable)
    expect(Object.keys(plain)).toEqual(["table"])
    expect(Object.isFrozen(frozen)).toBe(true)
    expect(frozen.table).toBe(frozenTable)
    expect(await plain.table("orders").execute()).toEqual(ORDERS)
  })
})

describe("auto-inject refuses what it cannot filter (500, logged, handler's query never unfiltered)", () => {
  let logged: MockInstance<typeof console.error>
  beforeEach(() => {
    logged = vi.spyOn(console, "error").mockImplementation(() => {})
  })
  afterEach(() => logged.mockRestore())

  const contexts = refusedContexts(TABLES)
  const causes: Readonly<Record<string, RegExp>> = {
    nested: /ctx\.services\.db is a table source inside ctx\.services/,
    promise: /ctx\.db is a promise/,
    nestedBesideATopLevelOne: /ctx\.admin\.db is a table source/,
    noTableSource: /no ctx value has a table\(name\) method/,
    tableNotAFunction: /no ctx value has a table\(name\) method/,
    noWhere: /ctx\.db\.table\(\) returned a value without a where\(\) method/
  }

  it.each(Object.keys(contexts))("%s", async (name) => {
    const errors: Array<unknown> = []
    // One endpoint per case, named after it, so each refusal is logged under its own name.
    const api = defineServe({
      auth: apiKeyAuth({ keys: callers }),
      tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
      context: contexts[name]!,
      hooks: { onError: ({ error }) => void errors.push(error) },
      queries: { [name]: ({ ctx }: { ctx: Ctx }) => ctx.db.table("orders").execute() }
    })
    const response = await api.handler(get(name, "key-acme"))
    expect(response.status).toBe(500)
    expect(JSON.parse(response.body!).error).toEqual({ type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(TenantScopeError)
    expect((errors[0] as Error).message).toMatch(causes[name]!)
    expect((errors[0] as Error).message).toContain(`a request to "${name}"`)
    const lines = logged.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("auto-inject refused"))
    expect(lines.some((line) => causes[name]!.test(line))).toBe(true)
  })

  it("refuses before the handler runs when the ctx has no table source", async () => {
    const handler = vi.fn(() => "ran")
    const api = defineServe({
      auth: apiKeyAuth({ keys: callers }),
      tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
      queries: { noContext: handler }
    })
    expect((await api.handler(get("noContext", "key-acme"))).status).toBe(500)
    expect(handler).not.toHaveBeenCalled()
  })

  it("logs each cause once, not once per request", async () => {
    const api = apiOver({ label: "nothing here" })
    for (let i = 0; i < 5; i++) expect((await api.handler(get("dialect", "key-globex"))).status).toBe(500)
    const lines = logged.mock.calls.filter(([line]) => String(line).includes('a request to "dialect"'))
    expect(lines.length).toBeLessThanOrEqual(1)
  })
})
