/**
 * A fast-check property over hidden ways to a table source: beside a top-level `db`, the context holds
 * the raw source (or its `table` function, bound or not) behind any chain of up to three wrappers —
 * a plain field, a non-enumerable field, a symbol-keyed field, a WeakRef, a getter on the prototype
 * chain, an array element, a Map value — and the handler follows the chain and reads `orders`. Every
 * answer must be the caller's own rows or a refusal (500, TenantScopeError): 0 cross-tenant rows.
 */
import fc from "fast-check"
import { apiKeyAuth, defineServe, type ServeAuthContext, TenantScopeError } from "queryserve"
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest"
import { type Row, RowsQuery } from "./support/rowsTable.js"

const TENANTS = ["acme", "globex", "initech"] as const
const ORDERS: ReadonlyArray<Row> = TENANTS.flatMap((tenant, t) => [1, 2].map((n) => ({ id: t * 10 + n, tenant_id: tenant, amount: n * 100 })))
const callers: Record<string, ServeAuthContext> = Object.fromEntries(TENANTS.map((tenant) => [`key-${tenant}`, { tenantId: tenant }]))

type Table = (name: string) => RowsQuery
const table: Table = () => new RowsQuery(ORDERS)
const db = { table }

const SYMBOL = Symbol("hidden")

/** A wrapper: how it hides a value, and how a handler gets the value back. */
interface Wrapper {
  readonly name: string
  hide(value: unknown): unknown
  reach(wrapped: unknown): unknown
}

const field = (wrapped: unknown): unknown => (wrapped as { inner: unknown }).inner

const WRAPPERS: ReadonlyArray<Wrapper> = [
  { name: "field", hide: (inner) => ({ inner }), reach: field },
  { name: "non-enumerable field", hide: (value) => Object.defineProperty({}, "inner", { value, enumerable: false }), reach: field },
  { name: "symbol field", hide: (value) => ({ [SYMBOL]: value }), reach: (wrapped) => (wrapped as { [SYMBOL]: unknown })[SYMBOL] },
  { name: "WeakRef", hide: (value) => new WeakRef(value as object), reach: (wrapped) => (wrapped as WeakRef<object>).deref() },
  { name: "prototype getter", hide: (value) => Object.create({ get inner() { return value } }) as unknown, reach: field },
  {
    name: "class getter",
    hide: (value) => new (class Holder { get inner() { return value } })(),
    reach: field
  },
  { name: "array element", hide: (value) => [value], reach: (wrapped) => (wrapped as Array<unknown>)[0] },
  { name: "Map value", hide: (value) => new Map([["inner", value]]), reach: (wrapped) => (wrapped as Map<string, unknown>).get("inner") }
]

/** What the chain ends in: the raw source, or its `table` function on its own. */
const TERMINALS: Readonly<Record<string, () => unknown>> = {
  source: () => db,
  "bound table": () => db.table.bind(db),
  "table function": () => db.table
}

const read = (terminal: unknown): Promise<Array<Row>> =>
  (typeof terminal === "function" ? (terminal as Table)("orders") : (terminal as typeof db).table("orders")).execute()

describe("tenant property: hidden table sources beside a top-level db", () => {
  let logged: MockInstance<typeof console.error>
  beforeAll(() => {
    logged = vi.spyOn(console, "error").mockImplementation(() => {})
  })
  afterAll(() => logged.mockRestore())

  it("never answers another tenant's row: each answer is the caller's own rows or a refusal", async () => {
    const tally = { answers: 0, filtered: 0, refused: 0, crossTenantRows: 0 }
    const cases = fc.record({
      tenant: fc.constantFrom(...TENANTS),
      chain: fc.array(fc.constantFrom(...WRAPPERS), { maxLength: 3 }),
      terminal: fc.constantFrom(...Object.keys(TERMINALS))
    })
    await fc.assert(
      fc.asyncProperty(cases, async ({ tenant, chain, terminal }) => {
        const hidden = chain.reduceRight((value, wrapper) => wrapper.hide(value), TERMINALS[terminal]!())
        const errors: Array<unknown> = []
        const api = defineServe({
          auth: apiKeyAuth({ keys: callers }),
          tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
          context: { db, hidden },
          hooks: { onError: ({ error }) => void errors.push(error) },
          queries: {
            orders: ({ ctx }: { ctx: { hidden: unknown } }) => read(chain.reduce((value, wrapper) => wrapper.reach(value), ctx.hidden))
          }
        })
        const response = await api.handler({ method: "GET", path: "/api/analytics/orders", headers: { "x-api-key": `key-${tenant}` } })
        tally.answers++
        if (response.status === 500) {
          tally.refused++
          return errors.length === 1 && errors[0] instanceof TenantScopeError
        }
        const rows = JSON.parse(response.body ?? "null") as Array<Row>
        tally.filtered++
        tally.crossTenantRows += rows.filter((row) => row.tenant_id !== tenant).length
        return response.status === 200 && JSON.stringify(rows) === JSON.stringify(ORDERS.filter((row) => row.tenant_id === tenant))
      }),
      { numRuns: 300 }
    )
    console.log(`[tenant property] ${tally.answers} generated contexts: ${tally.filtered} filtered, ${tally.refused} refused, ${tally.crossTenantRows} cross-tenant rows`)
    expect(tally.crossTenantRows).toBe(0)
    // Both outcomes occur: a bare top-level table function is filtered, every hidden one refused.
    expect(tally.filtered).toBeGreaterThan(0)
    expect(tally.refused).toBeGreaterThan(0)
  })
})
