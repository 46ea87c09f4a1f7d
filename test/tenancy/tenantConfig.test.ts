import { defineServe, initServe, type ServeAuthContext, type ServeRequest, type TenantConfig } from "queryserve"
import { describe, expect, it } from "vitest"
import { type Row, RowsQuery } from "./support/rowsTable.js"

const ORDERS: ReadonlyArray<Row> = [
  { id: 1, tenant_id: "acme", org: "acme" },
  { id: 2, tenant_id: "globex", org: "globex" },
  { id: 3, tenant_id: "42", org: "42" }
]
const db = { table: (_name: string) => new RowsQuery(ORDERS) }
type Ctx = { readonly db: typeof db; readonly tenantId: string | null }
const orders = ({ ctx }: { ctx: Ctx }) => ctx.db.table("orders").execute()

/** The caller is the `x-claims` header, parsed: any JSON value may arrive as the tenant claim. */
const claimsAuth = ({ request }: { request: ServeRequest }): ServeAuthContext | null => {
  const header = request.headers?.["x-claims"]
  return typeof header === "string" ? (JSON.parse(header) as ServeAuthContext) : null
}
const asCaller = (key: string, claims: Record<string, unknown>): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${key}`,
  headers: { "x-claims": JSON.stringify(claims) }
})
const answer = async (api: { handler: (request: ServeRequest) => unknown }, request: ServeRequest) => {
  const response = (await api.handler(request)) as { status: number; body: string }
  return { status: response.status, body: JSON.parse(response.body) as unknown }
}

const isAdmin = (auth: ServeAuthContext | null) => auth?.roles?.includes("admin") === true
const extract = (auth: ServeAuthContext | null) => (auth as { tenant?: unknown } | null)?.tenant

// Regression: with `required: false`, a claim of "", null, a boolean, an array or an object counted
// as a tenant-less admin and read every tenant's rows, no role needed.
describe("malformed tenant claims are no tenant", () => {
  const api = defineServe({
    auth: claimsAuth,
    tenant: { extract, mode: "auto-inject", required: false, allowUnscoped: isAdmin },
    context: { db },
    queries: { orders, whoAmI: { tenant: { mode: "manual" }, query: ({ ctx }: { ctx: Ctx }) => ({ tenantId: ctx.tenantId }) } }
  })
  const MALFORMED: ReadonlyArray<unknown> = ["", null, true, false, [], ["acme"], {}, { id: "acme" }, Number.NaN, Number.POSITIVE_INFINITY]

  it.each(MALFORMED.map((claim) => [JSON.stringify(claim) ?? String(claim), claim]))(
    "claim %s: 403 missing_tenant for a caller without the admin role, never another tenant's rows",
    async (_, claim) => {
      const { status, body } = await answer(api, asCaller("orders", { tenant: claim, roles: ["analyst"] }))
      expect(status).toBe(403)
      expect(body).toMatchObject({ error: { type: "FORBIDDEN", details: { reason: "missing_tenant" } } })
    }
  )

  it("a string or finite number is a tenant id (numbers as their string)", async () => {
    expect(await answer(api, asCaller("orders", { tenant: "globex" }))).toEqual({ status: 200, body: [ORDERS[1]] })
    expect(await answer(api, asCaller("orders", { tenant: 42 }))).toEqual({ status: 200, body: [ORDERS[2]] })
    expect(await answer(api, asCaller("whoAmI", { tenant: 42 }))).toEqual({ status: 200, body: { tenantId: "42" } })
  })

  it("allowUnscoped decides for callers without a tenant; a caller with a tenant stays filtered whatever it says", async () => {
    expect(await answer(api, asCaller("orders", { tenant: "", roles: ["admin"] }))).toEqual({ status: 200, body: ORDERS })
    expect(await answer(api, asCaller("orders", { tenant: "acme", roles: ["admin"] }))).toEqual({ status: 200, body: [ORDERS[0]] })
    // Anything but `true` is no.
    const truthy = defineServe({
      auth: claimsAuth,
      tenant: { extract, mode: "auto-inject", required: false, allowUnscoped: () => "yes" as unknown as boolean },
      context: { db },
      queries: { orders }
    })
    expect((await answer(truthy, asCaller("orders", {}))).status).toBe(403)
  })
})

// Regression: a query's `{ required: false }` under a global tenant config threw
// "config.extract is not a function" on every request (500).
describe("a query's partial tenant config is merged over the global one", () => {
  const global: TenantConfig = { extract, mode: "auto-inject" }

  it("inherits extract, column and mode", async () => {
    const { query, define } = initServe({ auth: claimsAuth, tenant: global, context: { db } })
    const api = define({
      queries: {
        optional: query.tenant({ required: false, allowUnscoped: isAdmin }).query(orders),
        byOrg: query.tenant({ column: "org" }).query(orders),
        manual: { tenant: { mode: "manual" }, query: ({ ctx }: { ctx: Ctx }) => ({ tenantId: ctx.tenantId, rows: ORDERS.length }) }
      }
    })
    expect(await answer(api, asCaller("optional", { tenant: "acme" }))).toEqual({ status: 200, body: [ORDERS[0]] })
    expect(await answer(api, asCaller("optional", { roles: ["admin"] }))).toEqual({ status: 200, body: ORDERS })
    expect((await answer(api, asCaller("optional", {}))).status).toBe(403)
    expect(await answer(api, asCaller("byOrg", { tenant: "globex" }))).toEqual({ status: 200, body: [ORDERS[1]] })
    expect(await answer(api, asCaller("manual", { tenant: "globex" }))).toEqual({ status: 200, body: { tenantId: "globex", rows: 3 } })
  })

  it("the global config's own fields can come from a class (methods on its prototype)", async () => {
    class ByTenantClaim {
      readonly mode = "auto-inject" as const
      extract(auth: ServeAuthContext | null) {
        return extract(auth)
      }
    }
    const api = defineServe({ auth: claimsAuth, tenant: new ByTenantClaim(), context: { db }, queries: { orders, optional: { tenant: { required: false, allowUnscoped: isAdmin }, query: orders } } })
    expect(await answer(api, asCaller("optional", { tenant: "globex" }))).toEqual({ status: 200, body: [ORDERS[1]] })
  })
})

describe("tenant configuration mistakes are thrown by defineServe, with what to change", () => {
  const define = (tenant: TenantConfig | undefined, own: Record<string, unknown> | false | undefined) =>
    () => defineServe({ auth: claimsAuth, tenant, context: { db }, queries: { orders: { tenant: own as never, query: orders } } })

  it("a partial config with nothing to inherit extract from", () => {
    expect(define(undefined, { required: false })).toThrow(
      /query "orders" has a tenant config without an extract function and there is no global tenant config.*tenant\.extract/
    )
  })

  it("auto-inject with required: false and no allowUnscoped, globally or merged", () => {
    expect(define({ extract, mode: "auto-inject", required: false }, undefined)).toThrow(/the global tenant config has tenant .*allowUnscoped/)
    expect(define(global(), { required: false })).toThrow(/query "orders" has tenant \{ mode: "auto-inject", required: false \} without allowUnscoped/)
    expect(define({ extract }, { required: false })).not.toThrow()
  })

  it("a global config without extract, an unknown mode, an empty column, a non-function allowUnscoped", () => {
    expect(define({ mode: "auto-inject" } as unknown as TenantConfig, undefined)).toThrow(/the global tenant config has no extract function\. Give it extract/)
    expect(define(global(), { mode: "auto" })).toThrow(/tenant\.mode must be "manual" or "auto-inject", not "auto"/)
    expect(define(global(), { column: "" })).toThrow(/tenant\.column must be a non-empty column name/)
    expect(define(global(), { required: false, allowUnscoped: true })).toThrow(/allowUnscoped must be a function/)
  })

  it("`tenant: false` and public endpoints without a config of their own need nothing", () => {
    expect(define(global(), false)).not.toThrow()
    expect(() =>
      defineServe({ auth: claimsAuth, tenant: { extract, mode: "auto-inject", required: false, allowUnscoped: isAdmin }, queries: { open: { auth: null, query: () => 1 } } })
    ).not.toThrow()
  })

  function global(): TenantConfig {
    return { extract, mode: "auto-inject" }
  }
})
