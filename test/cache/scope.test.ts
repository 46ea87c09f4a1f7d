import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api"
import { apiKeyAuth, defineServe, jwtAuth, type ServeAuthContext, type ServeRequest } from "queryserve"
import { SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ORDERS: ReadonlyArray<readonly [number, string, string, number]> = [
  [1, "acme", "eu", 100],
  [2, "acme", "us", 250],
  [3, "globex", "eu", 75],
  [4, "globex", "us", 400],
  [5, "initech", "eu", 5]
]

const CALLERS: Readonly<Record<string, ServeAuthContext>> = {
  "key-acme": { tenantId: "acme", roles: ["analyst"] },
  "key-acme-2": { tenantId: "acme", roles: ["analyst"], name: "a second acme analyst" },
  "key-globex": { tenantId: "globex", roles: ["analyst"] },
  "key-admin": { roles: ["admin"] },
  "key-admin-2": { roles: ["admin"], name: "another admin" }
}
const SECRET = "result-cache-scope-tests-secret-32b!"

const get = (key: string, apiKey: string | undefined, query: Record<string, string> = {}, headers: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${key}`,
  query,
  headers: apiKey === undefined ? headers : { ...headers, "x-api-key": apiKey }
})

describe("result cache scopes over DuckDB", () => {
  let instance: DuckDBInstance
  let connection: DuckDBConnection
  const runs = new Map<string, number>()
  const counted = (key: string) => runs.set(key, (runs.get(key) ?? 0) + 1)

  beforeAll(async () => {
    instance = await DuckDBInstance.create(":memory:")
    connection = await instance.connect()
    await connection.run("CREATE TABLE orders (id INTEGER, tenant_id VARCHAR, region VARCHAR, amount INTEGER)")
    for (const [id, tenant, region, amount] of ORDERS) {
      await connection.run(`INSERT INTO orders VALUES (${id}, '${tenant}', '${region}', ${amount})`)
    }
  })
  afterAll(() => connection?.closeSync())

  /** Rows of `tenant` (all tenants for null) in `region`, after a pause so concurrent requests overlap. */
  const ordersOf = async (tenant: string | null, region: string | undefined) => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    const filters = [tenant === null ? undefined : `tenant_id = '${tenant}'`, region === undefined ? undefined : `region = '${region}'`]
      .filter((filter) => filter !== undefined)
    const where = filters.length === 0 ? "" : ` WHERE ${filters.join(" AND ")}`
    return (await connection.runAndReadAll(`SELECT id, tenant_id, amount FROM orders${where} ORDER BY id`)).getRowObjectsJson()
  }

  const makeApi = () =>
    defineServe({
      resultCache: true,
      auth: [apiKeyAuth({ header: "x-api-key", keys: CALLERS }), jwtAuth({ secret: SECRET })],
      tenant: { extract: (auth) => (typeof auth?.tenantId === "string" ? auth.tenantId : null), required: false },
      queries: {
        orders: {
          cacheTtlMs: 60_000,
          query: ({ input, ctx }: { input: { region?: string }; ctx: { tenantId: string | null } }) => {
            counted("orders")
            return ordersOf(ctx.tenantId, input.region)
          }
        },
        mine: {
          cacheTtlMs: 60_000,
          tenant: false,
          query: ({ ctx }: { ctx: { auth: ServeAuthContext | null } }) => {
            counted("mine")
            return { caller: ctx.auth?.name ?? "unnamed", roles: ctx.auth?.roles ?? [] }
          }
        },
        everyone: {
          cacheTtlMs: 60_000,
          auth: null,
          query: () => {
            counted("everyone")
            return { open: true }
          }
        }
      }
    })

  const tenantsOf = (body: string | null): ReadonlyArray<unknown> =>
    (JSON.parse(body ?? "[]") as ReadonlyArray<{ tenant_id: string }>).map((row) => row.tenant_id)

  it("never shares an entry between two tenants, even for interleaved concurrent requests with the same input", async () => {
    runs.clear()
    const api = makeApi()
    const order = ["key-acme", "key-globex", "key-acme", "key-globex", "key-acme-2", "key-globex"]
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(order.map((key) => Promise.resolve(api.handler(get("orders", key, { region: "eu" })))))
      answers.forEach((answer, i) => {
        const tenant = CALLERS[order[i]!]!.tenantId
        expect(tenantsOf(answer.body)).toEqual([tenant])
      })
    }
    // One run per tenant: the rest were shares of a run in flight or hits.
    expect(runs.get("orders")).toBe(2)
    expect(await api.cache.stats()).toMatchObject({ entries: 2, misses: 2, hits: 16 })
  })

  it("shares a tenant's entry between its callers, whatever strategy authenticated them", async () => {
    runs.clear()
    const api = makeApi()
    const token = await new SignJWT({ tenant_id: "acme", roles: ["analyst"] })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(SECRET))
    const viaKey = await api.handler(get("orders", "key-acme"))
    const viaJwt = await api.handler(get("orders", undefined, {}, { authorization: `Bearer ${token}` }))
    expect([viaKey.headers["x-cache"], viaJwt.headers["x-cache"]]).toEqual(["MISS", "HIT"])
    expect(viaJwt.body).toBe(viaKey.body)
    expect(tenantsOf(viaJwt.body)).toEqual(["acme", "acme"])
  })

  it("keys callers without a tenant by their auth context: unscoped callers of a tenant-scoped endpoint, and endpoints without a tenant", async () => {
    runs.clear()
    const api = makeApi()
    const admin = await api.handler(get("orders", "key-admin", { region: "us" }))
    expect(tenantsOf(admin.body)).toEqual(["acme", "globex"])
    // Another caller without a tenant: its own entry, never the admin's nor a tenant's.
    const otherAdmin = await api.handler(get("orders", "key-admin-2", { region: "us" }))
    const acme = await api.handler(get("orders", "key-acme", { region: "us" }))
    expect([admin, otherAdmin, acme].map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "MISS", "MISS"])
    expect(tenantsOf(acme.body)).toEqual(["acme"])
    expect((await api.handler(get("orders", "key-admin", { region: "us" }))).headers["x-cache"]).toBe("HIT")

    const first = await api.handler(get("mine", "key-acme"))
    const second = await api.handler(get("mine", "key-acme-2"))
    const again = await api.handler(get("mine", "key-acme-2"))
    expect([first, second, again].map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "MISS", "HIT"])
    expect(JSON.parse(again.body!)).toEqual({ caller: "a second acme analyst", roles: ["analyst"] })
  })

  it("shares a public endpoint's entry between every caller", async () => {
    runs.clear()
    const api = makeApi()
    const answers = [await api.handler(get("everyone", undefined)), await api.handler(get("everyone", "key-acme")), await api.handler(get("everyone", "key-admin"))]
    expect(answers.map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT"])
    expect(runs.get("everyone")).toBe(1)
  })

  it("keeps tenant ids apart however they are spelled: no id reaches another's entries", async () => {
    runs.clear()
    const tenants = ["a", "a:b", "a*", "A", "a%3Ab", "a b", "ä", "[a]", "a\\"]
    const api = defineServe({
      resultCache: true,
      auth: ({ request }) => ({ tenantId: String(request.headers?.["x-tenant"]) }),
      tenant: { extract: (auth) => auth?.tenantId ?? null },
      queries: { whoami: { cacheTtlMs: 60_000, query: ({ ctx }: { ctx: { tenantId: string | null } }) => ({ tenant: ctx.tenantId }) } }
    })
    const ask = async (tenant: string) => JSON.parse((await api.handler(get("whoami", undefined, {}, { "x-tenant": tenant }))).body!)
    for (let round = 0; round < 2; round++) {
      for (const tenant of tenants) expect(await ask(tenant)).toEqual({ tenant })
    }
    expect(await api.cache.stats()).toMatchObject({ entries: tenants.length, hits: tenants.length })
    for (const tenant of tenants) expect(await api.cache.invalidate({ tenantId: tenant })).toBe(1)
  })
})
