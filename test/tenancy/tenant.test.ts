import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api"
import { apiKeyAuth, defineServe, type ServeAuthContext, type ServeRequest, type TenantConfig } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type Value = string | number
type Row = Record<string, unknown>

/**
 * A minimal SQL builder over DuckDB, shaped like the ones auto-inject expects: `db.table(name)`
 * returns an immutable builder whose `where(column, 'eq', value)` calls are ANDed as bound parameters.
 */
class TableQuery {
  constructor(
    private readonly connection: DuckDBConnection,
    private readonly name: string,
    private readonly filters: ReadonlyArray<readonly [string, Value]> = []
  ) {}

  where(column: string, _operator: "eq", value: Value): TableQuery {
    return new TableQuery(this.connection, this.name, [...this.filters, [column, value]])
  }

  toSQL(): { readonly sql: string; readonly params: ReadonlyArray<Value> } {
    const where = this.filters.length === 0 ? "" : ` WHERE ${this.filters.map(([column]) => `${column} = ?`).join(" AND ")}`
    return { sql: `SELECT * FROM ${this.name}${where} ORDER BY id`, params: this.filters.map(([, value]) => value) }
  }

  async execute(): Promise<Array<Row>> {
    const { sql, params } = this.toSQL()
    return (await this.connection.runAndReadAll(sql, [...params])).getRowObjectsJson()
  }
}

const ORDERS: ReadonlyArray<readonly [number, string, string, number]> = [
  [1, "acme", "eu", 100],
  [2, "acme", "us", 250],
  [3, "globex", "eu", 75],
  [4, "acme", "eu", 20],
  [5, "globex", "us", 400],
  [6, "initech", "eu", 5]
]
const TENANTS = ["acme", "globex", "initech"] as const

const callers: Record<string, ServeAuthContext> = {
  "key-acme": { tenantId: "acme", roles: ["analyst"] },
  "key-globex": { tenantId: "globex", roles: ["analyst"] },
  "key-initech": { tenantId: "initech", roles: ["analyst"] },
  "key-admin": { roles: ["admin"] }
}
const keyOf = (tenant: string) => `key-${tenant}`

const get = (key: string, apiKey: string | undefined, query: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${key}`,
  query,
  headers: apiKey === undefined ? {} : { "x-api-key": apiKey }
})

describe("tenant isolation", () => {
  let instance: DuckDBInstance
  let connection: DuckDBConnection
  /** Ground truth, straight from DuckDB without the runtime. */
  const ordersOf = async (tenant: string) =>
    (await connection.runAndReadAll("SELECT * FROM orders WHERE tenant_id = ? ORDER BY id", [tenant])).getRowObjectsJson()

  beforeAll(async () => {
    instance = await DuckDBInstance.create(":memory:")
    connection = await instance.connect()
    await connection.run("CREATE TABLE orders (id INTEGER, tenant_id VARCHAR, region VARCHAR, amount INTEGER)")
    await connection.run("CREATE TABLE events (id INTEGER, org VARCHAR, kind VARCHAR)")
    for (const [id, tenant, region, amount] of ORDERS) {
      await connection.run("INSERT INTO orders VALUES (?, ?, ?, ?)", [id, tenant, region, amount])
      await connection.run("INSERT INTO events VALUES (?, ?, ?)", [id, tenant, "view"])
    }
  })

  afterAll(() => {
    connection?.closeSync()
    instance?.closeSync()
  })

  const tenantOfCaller = (auth: ServeAuthContext | null) => auth?.tenantId
  const autoInject: TenantConfig = { extract: tenantOfCaller, mode: "auto-inject" }
  const isAdmin = (auth: ServeAuthContext | null) => auth?.roles?.includes("admin") === true

  const makeApi = () => {
    const db = { table: (name: string) => new TableQuery(connection, name), dialect: () => "duckdb" }
    type Ctx = { readonly input: Record<string, string>; readonly db: typeof db; readonly tenantId: string | null }
    return defineServe({
      auth: apiKeyAuth({ keys: callers }),
      tenant: autoInject,
      context: { db, label: "not a table source" },
      queries: {
        orders: ({ ctx }: { ctx: Ctx }) => ctx.db.table("orders").execute(),
        ordersByRegion: ({ input, ctx }: { input: Record<string, string>; ctx: Ctx }) =>
          ctx.db.table("orders").where("region", "eq", input.region ?? "eu").execute(),
        // A caller naming another tenant only adds a filter: it is ANDed with the injected one.
        ordersOfTenant: ({ input, ctx }: { input: Record<string, string>; ctx: Ctx }) =>
          ctx.db.table("orders").where("tenant_id", "eq", input.tenant ?? "").execute(),
        sql: ({ ctx }: { ctx: Ctx & { label: string } }) => ({
          ...ctx.db.table("orders").where("region", "eq", "eu").toSQL(),
          dialect: ctx.db.dialect(),
          label: ctx.label
        }),
        events: {
          tenant: { extract: tenantOfCaller, mode: "auto-inject", column: "org" },
          query: ({ ctx }: { ctx: Ctx }) => ctx.db.table("events").execute()
        },
        manualTotal: {
          tenant: { extract: tenantOfCaller, mode: "manual" },
          query: async ({ ctx }: { ctx: Ctx }) => {
            const reader = await connection.runAndReadAll("SELECT sum(amount)::INTEGER AS total FROM orders WHERE tenant_id = ?", [ctx.tenantId!])
            return reader.getRowObjectsJson()[0]
          }
        },
        allOrders: {
          requiredRoles: ["admin"],
          tenant: { required: false, allowUnscoped: isAdmin },
          query: ({ ctx }: { ctx: Ctx }) => ctx.db.table("orders").execute()
        },
        regions: {
          tenant: false,
          query: async () => (await connection.runAndReadAll("SELECT DISTINCT region FROM orders ORDER BY region")).getRowObjectsJson()
        }
      }
    })
  }

  it("2+ tenant matrix: each tenant reads exactly its own rows from every tenant-scoped endpoint, and no other", async () => {
    const api = makeApi()
    let crossTenantRows = 0
    let checked = 0
    for (const tenant of TENANTS) {
      const expected = await ordersOf(tenant)
      const requests = [
        [get("orders", keyOf(tenant)), expected],
        [get("ordersByRegion", keyOf(tenant), { region: "eu" }), expected.filter((row) => row.region === "eu")],
        [get("ordersByRegion", keyOf(tenant), { region: "us" }), expected.filter((row) => row.region === "us")]
      ] as const
      for (const [request, rows] of requests) {
        const response = await api.handler(request)
        expect(response.status).toBe(200)
        const body = JSON.parse(response.body!) as Array<Row>
        crossTenantRows += body.filter((row) => row.tenant_id !== tenant).length
        checked += body.length
        expect(body).toEqual(rows)
      }
      for (const other of TENANTS.filter((t) => t !== tenant)) {
        const response = await api.handler(get("ordersOfTenant", keyOf(tenant), { tenant: other }))
        expect(JSON.parse(response.body!)).toEqual([])
      }
      const events = JSON.parse((await api.handler(get("events", keyOf(tenant)))).body!) as Array<Row>
      expect(events.map((row) => row.id)).toEqual(expected.map((row) => row.id))
      crossTenantRows += events.filter((row) => row.org !== tenant).length
    }
    console.log(`[tenant matrix] ${TENANTS.length} tenants, ${checked} rows returned, ${crossTenantRows} cross-tenant rows`)
    expect(crossTenantRows).toBe(0)
  })

  it("injects the tenant filter as a bound parameter and keeps the other members of the wrapped value", async () => {
    const response = await makeApi().handler(get("sql", "key-globex"))
    expect(JSON.parse(response.body!)).toEqual({
      sql: "SELECT * FROM orders WHERE tenant_id = ? AND region = ? ORDER BY id",
      params: ["globex", "eu"],
      dialect: "duckdb",
      label: "not a table source"
    })
  })

  it("manual mode hands the handler ctx.tenantId to filter with", async () => {
    const api = makeApi()
    for (const tenant of TENANTS) {
      const expected = (await ordersOf(tenant)).reduce((sum, row) => sum + Number(row.amount), 0)
      expect(JSON.parse((await api.handler(get("manualTotal", keyOf(tenant)))).body!)).toEqual({ total: expected })
    }
  })

  it("refuses a caller without a tenant with 403 missing_tenant, before the handler runs", async () => {
    const response = await makeApi().handler(get("orders", "key-admin"))
    expect(response.status).toBe(403)
    expect(JSON.parse(response.body!).error).toMatchObject({ type: "FORBIDDEN", details: { reason: "missing_tenant" } })
    expect((await makeApi().handler(get("orders", undefined))).status).toBe(401)
  })

  it("required: false with allowUnscoped lets that caller without a tenant through unfiltered; a tenant caller stays filtered", async () => {
    const api = makeApi()
    expect(JSON.parse((await api.handler(get("allOrders", "key-admin"))).body!)).toHaveLength(ORDERS.length)
    const callerWithTenantAndRole = defineServe({
      auth: () => ({ tenantId: "acme", roles: ["admin"] }),
      context: { db: { table: (name: string) => new TableQuery(connection, name) } },
      queries: {
        allOrders: {
          requiredRoles: ["admin"],
          tenant: { extract: tenantOfCaller, mode: "auto-inject", required: false, allowUnscoped: isAdmin },
          query: ({ ctx }: { ctx: { db: { table(name: string): TableQuery } } }) => ctx.db.table("orders").execute()
        }
      }
    })
    expect(JSON.parse((await callerWithTenantAndRole.handler(get("allOrders", undefined))).body!)).toEqual(await ordersOf("acme"))
  })

  it("tenant: false opts a query out of the global tenant config", async () => {
    const response = await makeApi().handler(get("regions", "key-admin"))
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body!)).toEqual([{ region: "eu" }, { region: "us" }])
  })
})
