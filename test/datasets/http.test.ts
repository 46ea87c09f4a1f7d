/** Datasets served over HTTP: the same stages as endpoints (auth, guards, tenant, cache, events), the catalogue, OpenAPI. */
import { apiKeyAuth, createDatasetClient, dataset, defineServe, dimension, measure, ServeClientError } from "queryserve"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { type DemoDatabase, openDemoDatabase, recording } from "./demoDatabase.js"
import { Orders } from "./ordersModel.js"

let db: DemoDatabase

beforeAll(async () => {
  db = await openDemoDatabase()
})
afterAll(() => db?.close())

const KEYS: Readonly<Record<string, { id: string; tenantId?: string; roles: Array<string> }>> = {
  acme: { id: "a", tenantId: "acme", roles: ["analyst"] },
  globex: { id: "g", tenantId: "globex", roles: ["analyst"] },
  viewer: { id: "v", tenantId: "acme", roles: [] },
  admin: { id: "root", roles: ["admin", "analyst"] },
  nobody: { id: "n", roles: ["analyst"] }
}

const Guarded = dataset("guarded", {
  source: "order_facts",
  tenantKey: "tenant_id",
  roles: ["analyst"],
  allowUnscoped: (auth) => auth?.roles?.includes("admin") === true,
  dimensions: { region: dimension.string() },
  measures: { revenue: measure.sum("amount") }
})

const makeApi = (executor = db.executor) =>
  defineServe({
    queries: {},
    auth: apiKeyAuth({ validate: (key) => KEYS[key] ?? null }),
    tenant: { extract: (auth) => auth?.tenantId },
    resultCache: true,
    datasets: { orders: { ...Orders, cacheTtlMs: 60_000 } as typeof Orders, guarded: Guarded },
    sql: executor
  })

const post = (api: ReturnType<typeof makeApi>, name: string, body: unknown, key = "acme", path = `/api/analytics/datasets/${name}`) =>
  api.handler({
    method: "POST",
    path,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const revenueByRegion = { dimensions: ["region"], measures: ["revenue", "orders"] }

describe("POST {basePath}/datasets/{name}", () => {
  it("answers { data, page } equal to hand-written SQL for every tenant", async () => {
    const api = makeApi()
    for (const tenant of ["acme", "globex"]) {
      const response = await post(api, "orders", revenueByRegion, tenant)
      expect(response.status).toBe(200)
      const answer = JSON.parse(response.body!)
      const expected = await db.sql(
        "SELECT region, sum(amount) AS revenue, count(*) AS orders FROM order_facts WHERE tenant_id = ? GROUP BY region ORDER BY region",
        tenant
      )
      expect(answer.page).toEqual({ limit: 100, nextCursor: null, hasMore: false })
      expect(answer.data.map((row: { region: string; revenue: number; orders: number }) => [row.region, row.revenue, row.orders])).toEqual(
        expected.map((row) => [row.region, Number(row.revenue), Number(row.orders)])
      )
    }
  })

  it("refuses a bad query with 400 VALIDATION_ERROR naming the path, and runs nothing", async () => {
    const executor = recording(db.executor)
    const api = makeApi(executor)
    const response = await post(api, "orders", { dimensions: ["planet"] })
    expect(response.status).toBe(400)
    const envelope = JSON.parse(response.body!)
    expect(envelope.error.type).toBe("VALIDATION_ERROR")
    expect(envelope.error.details.issues[0].path).toEqual(["dimensions", 0])
    expect(envelope.error.details.issues[0].message).toContain("region")
    expect(executor.statements).toHaveLength(0)
  })

  it("keeps the dataset's guards and tenancy: 401 without a key, 403 without the role, 403 missing_tenant, admin unscoped", async () => {
    const executor = recording(db.executor)
    const api = makeApi(executor)
    const anonymous = await api.handler({ method: "POST", path: "/api/analytics/datasets/guarded", body: "{}" })
    expect(anonymous.status).toBe(401)
    expect((await post(api, "guarded", { measures: ["revenue"] }, "viewer")).status).toBe(403)
    const tenantless = await post(api, "guarded", { measures: ["revenue"] }, "nobody")
    expect(tenantless.status).toBe(403)
    expect(JSON.parse(tenantless.body!).error.details.reason).toBe("missing_tenant")
    expect(executor.statements).toHaveLength(0)
    const admin = await post(api, "guarded", { measures: ["revenue"] }, "admin")
    expect(admin.status).toBe(200)
    const [all] = await db.sql("SELECT sum(amount) AS revenue FROM order_facts")
    expect(JSON.parse(admin.body!).data).toEqual([{ revenue: Number(all!.revenue) }])
  })

  it("is result-cached per tenant, and its events name dataset:{name}", async () => {
    const executor = recording(db.executor)
    const api = makeApi(executor)
    const events: Array<string> = []
    api.queryLogger.on((event) => events.push(`${event.status} ${event.endpointKey}`))
    const first = await post(api, "orders", revenueByRegion, "acme")
    const second = await post(api, "orders", revenueByRegion, "acme")
    const other = await post(api, "orders", revenueByRegion, "globex")
    expect([first.headers["x-cache"], second.headers["x-cache"], other.headers["x-cache"]]).toEqual(["MISS", "HIT", "MISS"])
    expect(second.body).toBe(first.body)
    expect(other.body).not.toBe(first.body)
    expect(executor.statements).toHaveLength(2)
    expect(events).toContain("completed dataset:orders")
  })

  it("pages with a cursor bound to the query", async () => {
    const api = makeApi()
    const seen: Array<string> = []
    let cursor: string | null | undefined
    do {
      const response = await post(api, "orders", { dimensions: ["region", "category"], measures: ["orders"], limit: 3, ...(cursor ? { cursor } : {}) })
      expect(response.status).toBe(200)
      const answer = JSON.parse(response.body!)
      for (const row of answer.data) seen.push(`${row.region}/${row.category}`)
      cursor = answer.page.nextCursor
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    const groups = await db.sql("SELECT count(*) AS n FROM (SELECT DISTINCT region, category FROM order_facts WHERE tenant_id = 'acme')")
    expect(seen).toHaveLength(Number(groups[0]!.n))
    const first = JSON.parse((await post(api, "orders", { dimensions: ["region", "category"], measures: ["orders"], limit: 3 })).body!)
    const rebound = await post(api, "orders", { dimensions: ["region"], measures: ["orders"], limit: 3, cursor: first.page.nextCursor })
    expect(rebound.status).toBe(400)
    expect(JSON.parse(rebound.body!).error.details.issues[0].path).toEqual(["cursor"])
  })
})

describe("formats", () => {
  it("answers the rows of the page alone as CSV or NDJSON, by suffix or by Accept", async () => {
    const api = makeApi()
    const csv = await post(api, "orders", revenueByRegion, "acme", "/api/analytics/datasets/orders.csv")
    expect(csv.status).toBe(200)
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/)
    const json = JSON.parse((await post(api, "orders", revenueByRegion, "acme")).body!)
    const lines = csv.body!.trim().split(/\r?\n/)
    expect(lines[0]).toBe("region,revenue,orders")
    expect(lines).toHaveLength(json.data.length + 1)
    const ndjson = await api.handler({
      method: "POST",
      path: "/api/analytics/datasets/orders",
      headers: { "x-api-key": "acme", "content-type": "application/json", accept: "application/x-ndjson" },
      body: JSON.stringify(revenueByRegion)
    })
    expect(ndjson.body!.trim().split("\n").map((line) => JSON.parse(line))).toEqual(json.data)
  })
})

describe("the catalogue", () => {
  it("GET {basePath}/datasets lists the datasets the caller may query", async () => {
    const api = makeApi()
    const get = (key: string) => api.handler({ method: "GET", path: "/api/analytics/datasets", headers: { "x-api-key": key } })
    const names = async (key: string) => JSON.parse((await get(key)).body!).datasets.map((entry: { name: string }) => entry.name)
    expect(await names("acme")).toEqual(["orders", "guarded"])
    expect(await names("viewer")).toEqual(["orders"])
    expect(await names("nobody")).toEqual([])
    expect(await names("admin")).toEqual(["guarded"])
  })

  it("GET {basePath}/datasets/{name} describes one, behind its guards", async () => {
    const api = makeApi()
    const response = await api.handler({ method: "GET", path: "/api/analytics/datasets/orders", headers: { "x-api-key": "acme" } })
    expect(response.status).toBe(200)
    const entry = JSON.parse(response.body!)
    expect(entry.name).toBe("orders")
    expect(entry.dimensions).toContainEqual({ name: "day", kind: "time", grains: ["day", "week", "month", "quarter", "year"] })
    expect(entry.measures).toContainEqual({ name: "revenue", aggregation: "sum" })
    expect(entry.filterOps).toContain("between")
    const refused = await api.handler({ method: "GET", path: "/api/analytics/datasets/guarded", headers: { "x-api-key": "viewer" } })
    expect(refused.status).toBe(403)
  })
})

describe("define time", () => {
  it("a tenant-keyed dataset in an API without tenant config, a dataset without sql, or under another name is an Error", () => {
    expect(() => defineServe({ queries: {}, datasets: { orders: Orders }, sql: db.executor })).toThrow(/tenantKey.*no tenant config/)
    expect(() => defineServe({ queries: {}, tenant: { extract: () => "t" }, datasets: { orders: Orders } })).toThrow(/give `sql`/)
    expect(() => defineServe({ queries: {}, tenant: { extract: () => "t" }, datasets: { sales: Orders }, sql: db.executor })).toThrow(
      /under the key "sales"/
    )
  })
})

describe("OpenAPI", () => {
  it("has one POST operation per dataset whose body lists the model's fields as enums", async () => {
    const api = makeApi()
    const document = JSON.parse((await api.handler({ method: "GET", path: "/api/analytics/openapi.json" })).body!)
    const operation = document.paths["/api/analytics/datasets/orders"].post
    expect(operation).toBeDefined()
    const body = JSON.stringify(operation.requestBody)
    for (const field of ["region", "category", "revenue", "revenuePerCustomer", "day.month"]) expect(body).toContain(`"${field}"`)
  })
})

describe("api.queryDataset", () => {
  it("asks in-process through the same stages, rows typed by the model", async () => {
    const api = makeApi()
    const answer = await api.queryDataset("orders", { dimensions: ["region"], measures: ["revenue"] }, { context: { auth: KEYS.globex } })
    expectTypeOf(answer.data).toEqualTypeOf<ReadonlyArray<{ readonly region: string | null; readonly revenue: number | null }>>()
    const viaHttp = JSON.parse((await post(api, "orders", { dimensions: ["region"], measures: ["revenue"] }, "globex")).body!)
    expect(answer).toEqual(viaHttp)
    await expect(api.queryDataset("guarded", { measures: ["revenue"] }, { context: { auth: KEYS.viewer } })).rejects.toMatchObject({ status: 403 })
    // @ts-expect-error a field the model does not have
    await expect(api.queryDataset("orders", { measures: ["profit"] }, { context: { auth: KEYS.acme } })).rejects.toMatchObject({ status: 400 })
  })
})

describe("createDatasetClient", () => {
  it("queries over HTTP with fields named by the model and rows typed, failing with the envelope", async () => {
    const api = makeApi()
    const server = await api.start({ port: 0, hostname: "127.0.0.1", quiet: true })
    try {
      const client = createDatasetClient<typeof api>({ baseUrl: `${server.url}/api/analytics`, headers: { "x-api-key": "acme" } })
      const answer = await client.query("orders", { dimensions: ["region"], measures: ["orders"] })
      expectTypeOf(answer.data).toEqualTypeOf<ReadonlyArray<{ readonly region: string | null; readonly orders: number }>>()
      expect(answer).toEqual(await api.queryDataset("orders", { dimensions: ["region"], measures: ["orders"] }, { context: { auth: KEYS.acme } }))
      // @ts-expect-error a field the model does not have
      const refused = await client.query("orders", { measures: ["profit"] }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(ServeClientError)
      expect((refused as ServeClientError).status).toBe(400)
    } finally {
      await server.stop()
    }
  })
})
