/**
 * The demo as a user runs it: `main.ts` in its own process on a free port, every endpoint called
 * over HTTP with each key, and every number checked against independent SQL on a DuckDB database
 * built here with the same generator, seed and size.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_API_KEYS } from "../../examples/analytics/api.js"
import { createDemoDatabase, type DemoDatabase } from "../../examples/analytics/dataset.js"
import { ADMIN_KEY, TENANT_KEYS } from "./support/crossCheck.js"
import { type DemoProcess, startDemo } from "./support/demoProcess.js"
import { callApi, type CallOptions } from "./support/http.js"
import { parseExposition, valueOf } from "../support/prometheus.js"
import { METRIC_CASES, RANGE, type SqlQuery, sqlOn } from "./support/references.js"

const ROWS = 60_000

let demo: DemoProcess
let reference: DemoDatabase
let query: SqlQuery

beforeAll(async () => {
  ;[demo, reference] = await Promise.all([startDemo(ROWS), createDemoDatabase({ rows: ROWS, log: () => {} })])
  query = sqlOn(reference.connection)
}, 90_000)

afterAll(async () => {
  await demo?.stop("SIGKILL")
  await reference?.close()
})

const call = (endpoint: string, options?: CallOptions) => callApi(demo.baseUrl, endpoint, options)

const tenantCases = Object.entries(METRIC_CASES).filter(([, c]) => c.endpoint !== "tenantsOverview")

describe("start-up", () => {
  it("prints progress, the URLs, the keys, commands to paste and its start-up time", () => {
    const output = demo.output()
    expect(output).toMatch(/^\[demo\] orders: 60,000 rows \(\d+\.\ds\)$/m)
    expect(output).toContain(`API reference  ${demo.baseUrl}/docs`)
    expect(output).toContain(`OpenAPI        ${demo.baseUrl}/openapi.json`)
    expect(output).toContain(`Metrics        ${demo.baseUrl}/metrics (Prometheus, admin key)`)
    for (const key of Object.keys(DEMO_API_KEYS)) {
      expect(output).toContain(key)
      expect(output).toMatch(new RegExp(`^  curl -s .*-H 'x-api-key: ${key}' '${demo.baseUrl}/\\w+`, "m"))
    }
    expect(demo.readyMs).toBeGreaterThan(0)
    // The port came from PORT=0: a real free port, printed as the server bound it.
    expect(demo.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/api\/analytics$/)
  })
})

const run = promisify(execFile)
const hasCurl = await run("curl", ["--version"]).then(() => true, () => false)
if (!hasCurl) console.log("[skip] pasting the printed curl lines: no curl on this machine")

describe.skipIf(!hasCurl)("the printed curl lines", () => {
  it("work when pasted into a shell", async () => {
    const lines = demo.output().split("\n").filter((line) => line.startsWith("  curl ")).map((line) => line.trim())
    expect(lines.length).toBeGreaterThanOrEqual(4)
    for (const line of lines) {
      const { stdout } = await run("sh", ["-c", `${line} -w '\n%{http_code}'`])
      const status = stdout.slice(stdout.lastIndexOf("\n") + 1)
      expect(status, `${line}\n${stdout}`).toBe("200")
    }
  })
})

describe("every endpoint, with each tenant's key, matches independent SQL", () => {
  for (const [name, metricCase] of tenantCases) {
    it(name, async () => {
      const answers = []
      for (const [tenant, key] of Object.entries(TENANT_KEYS)) {
        const answer = await call(metricCase.endpoint, { key, input: metricCase.input })
        expect(answer.status).toBe(200)
        const expected = await metricCase.reference(query, tenant)
        expect(expected.length).toBeGreaterThan(0)
        expect(answer.json).toEqual(expected)
        answers.push(answer.json)
      }
      expect(answers[0]).not.toEqual(answers[1])
    })
  }
})

describe("tenant isolation", () => {
  it("no order, product or total of another tenant reaches a caller", async () => {
    for (const [tenant, key] of Object.entries(TENANT_KEYS)) {
      const orders = (await call("ordersExport", { key, input: { ...RANGE, maxRows: 10_000 } })).json as Array<{ order_id: number }>
      const products = (await call("topProducts", { key, input: { ...RANGE, limit: 100 } })).json as Array<{ product_id: number }>
      const [foreign] = await query(
        `SELECT (SELECT count(*) FROM orders WHERE order_id IN (SELECT unnest($orders::BIGINT[])) AND tenant_id <> $tenant)
              + (SELECT count(*) FROM products WHERE product_id IN (SELECT unnest($products::BIGINT[])) AND tenant_id <> $tenant) AS n,
                (SELECT count(*) FROM orders WHERE tenant_id = $tenant AND day BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)) AS own`,
        {
          tenant,
          ...RANGE,
          orders: `[${orders.map((o) => o.order_id).join(",")}]`,
          products: `[${products.map((p) => p.product_id).join(",")}]`
        }
      )
      expect(foreign?.n).toBe(0)
      expect(orders).toHaveLength(Math.min(10_000, foreign?.own as number))
      const summary = (await call("tenantSummary", { key })).json as Array<{ tenant_id: string }>
      expect(summary.map((row) => row.tenant_id)).toEqual([tenant])
    }
  })

  it("the admin endpoint refuses tenant keys with 403 and shows every tenant to the admin", async () => {
    for (const key of Object.values(TENANT_KEYS)) {
      const refused = await call("tenantsOverview", { key })
      expect(refused.status).toBe(403)
      expect(refused.json).toMatchObject({ error: { type: "FORBIDDEN", details: { reason: "missing_role", required: ["admin"] } } })
    }
    const overview = await call("tenantsOverview", { key: ADMIN_KEY })
    expect(overview.status).toBe(200)
    expect(overview.json).toEqual(await METRIC_CASES.tenantsOverview!.reference(query, null))
    expect((overview.json as Array<unknown>).length).toBe(3)
  })

  it("the admin key has no tenant, so tenant-scoped endpoints refuse it", async () => {
    const answer = await call("revenueByRegion", { key: ADMIN_KEY, input: RANGE })
    expect(answer.status).toBe(403)
    expect(answer.json).toMatchObject({ error: { type: "FORBIDDEN", details: { reason: "missing_tenant" } } })
  })
})

describe("credentials", () => {
  it("a missing key is 401 missing_credentials and a wrong key 401 invalid_credentials", async () => {
    const missing = await call("revenueByRegion", { input: RANGE })
    expect(missing.status).toBe(401)
    expect(missing.json).toMatchObject({ error: { type: "UNAUTHORIZED", details: { reason: "missing_credentials" } } })
    const wrong = await call("revenueByRegion", { key: "demo-acme-key-x", input: RANGE })
    expect(wrong.status).toBe(401)
    expect(wrong.json).toMatchObject({ error: { type: "UNAUTHORIZED", details: { reason: "invalid_credentials" } } })
  })
})

describe("input validation happens before any SQL", () => {
  const key = TENANT_KEYS.acme
  const invalid: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["revenueByRegion", { from: "2025-02-30", to: "2025-03-31" }, "from"],
    ["revenueByRegion", { from: "2025-03-01' OR 1=1 --", to: "2025-03-31" }, "from"],
    ["revenueByRegion", { from: "2025-03-01" }, "to"],
    // Postgres has no year 0; ClickHouse's Date holds 1970-01-01 to 2149-06-06.
    ["revenueByRegion", { from: "0000-01-01", to: "2025-03-31" }, "from"],
    ["revenueByRegion", { from: "1969-12-31", to: "2025-03-31" }, "from"],
    ["revenueByRegion", { from: "2025-03-01", to: "2149-01-01" }, "to"],
    ["revenueByRegion", { from: "2025-03-31", to: "2025-03-01" }, ""],
    ["revenueByDay", { ...RANGE, region: "emea' OR '1'='1" }, "region"],
    ["topProducts", { ...RANGE, limit: "101" }, "limit"],
    ["topProducts", { ...RANGE, limit: "2.5" }, "limit"],
    ["activeCustomers", { ...RANGE, granularity: "year" }, "granularity"],
    ["ordersExport", { ...RANGE, maxRows: "0" }, "maxRows"]
  ]
  for (const [endpoint, input, field] of invalid) {
    it(`${endpoint} ${JSON.stringify(input)} → 400 naming ${field || "the range"}`, async () => {
      const answer = await call(endpoint, { key, input })
      expect(answer.status).toBe(400)
      const issues = (answer.json as { error: { type: string; details: { issues: Array<{ path: Array<string> }> } } }).error
      expect(issues.type).toBe("VALIDATION_ERROR")
      // One issue, naming the field (or the whole range when `from` is after `to`).
      expect(issues.details.issues.map((issue) => issue.path.join("."))).toEqual([field])
    })
  }

  it("applies defaults and coerces numbers from the query string", async () => {
    const top = await call("topProducts", { key, input: RANGE })
    expect((top.json as Array<unknown>).length).toBe(10)
    const three = await call("topProducts", { key, input: { ...RANGE, limit: "3" } })
    expect(three.json).toEqual((top.json as Array<unknown>).slice(0, 3))
  })
})

describe("documentation", () => {
  it("serves the API reference page and the script it loads, without credentials", async () => {
    const page = await call("docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.text).toContain("<title>queryserve analytics demo</title>")
    const script = /<script src="\.\/([^"]+)"/.exec(page.text)?.[1]
    expect(script).toBeDefined()
    const asset = await fetch(new URL(script!, `${demo.baseUrl}/docs`))
    expect(asset.status).toBe(200)
    expect(asset.headers.get("content-type")).toMatch(/javascript/)
  })

  interface OpenApiDocument {
    readonly openapi: string
    readonly info: { readonly title: string }
    readonly paths: Record<string, { readonly get: { operationId: string; tags: Array<string>; parameters?: Array<{ name: string; description?: string }> } }>
    readonly components: { readonly securitySchemes: Record<string, unknown> }
  }
  const openApiDocument = async () => (await call("openapi.json")).json as OpenApiDocument

  it("serves an OpenAPI 3.1 document with every endpoint, its tags and parameters", async () => {
    const document = await openApiDocument()
    expect(document.openapi).toBe("3.1.0")
    expect(document.info.title).toBe("queryserve analytics demo")
    // The endpoints, each a GET; the orders dataset's routes are documented beside them.
    const endpointPaths = Object.entries(document.paths).filter(([path]) => !path.startsWith("/api/analytics/datasets"))
    const operations = endpointPaths.map(([, path]) => path.get.operationId).sort()
    expect(operations).toEqual([...new Set(Object.values(METRIC_CASES).map((c) => c.endpoint)), "ordersPage"].sort())
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/api/analytics/datasets", "/api/analytics/datasets/orders"]))
    const topProducts = document.paths["/api/analytics/topProducts"]!.get
    expect(topProducts.tags).toEqual(["Products"])
    expect(topProducts.parameters?.map((p) => p.name).sort()).toEqual(["from", "limit", "to"])
  })

  it("describes the days it accepts: the years every engine holds", async () => {
    const { parameters } = (await openApiDocument()).paths["/api/analytics/revenueByRegion"]!.get
    for (const name of ["from", "to"]) {
      expect(parameters?.find((p) => p.name === name)?.description).toMatch(/YYYY-MM-DD, years 1970 to 2148\)$/)
    }
  })

  it("documents the x-api-key header as the security scheme", async () => {
    const { components } = await openApiDocument()
    expect(Object.values(components.securitySchemes)).toEqual([{ type: "apiKey", in: "header", name: "x-api-key" }])
  })
})

describe("HTTP behaviour", () => {
  it("exports orders as CSV, by Accept header or .csv suffix, with the same rows as JSON", async () => {
    const input = { ...RANGE, maxRows: 25 }
    const json = (await call("ordersExport", { key: TENANT_KEYS.globex, input })).json as Array<Record<string, unknown>>
    const byAccept = await call("ordersExport", { key: TENANT_KEYS.globex, input, headers: { accept: "text/csv" } })
    const bySuffix = await call("ordersExport.csv", { key: TENANT_KEYS.globex, input })
    for (const answer of [byAccept, bySuffix]) {
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toMatch(/^text\/csv/)
      expect(answer.text).toBe(bySuffix.text)
    }
    const [header, ...lines] = bySuffix.text.trimEnd().split("\r\n")
    expect(header).toBe("order_id,day,region,product,quantity,amount")
    expect(lines).toEqual(json.map((row) => Object.values(row).join(",")))
  })

  it("caches per caller, never the export", async () => {
    const region = await call("revenueByRegion", { key: TENANT_KEYS.acme, input: RANGE })
    // 60 s on a miss; a hit says what is left of the entry (earlier tests may have stored it).
    expect(region.headers.get("cache-control")).toMatch(/^private, max-age=(?:[1-5]?\d|60)$/)
    const exported = await call("ordersExport", { key: TENANT_KEYS.acme, input: RANGE })
    expect(exported.headers.get("cache-control")).toBe("no-store")
  })

  it("an unknown endpoint is 404 NOT_FOUND", async () => {
    const answer = await call("revenueByPlanet", { key: TENANT_KEYS.acme })
    expect(answer.status).toBe(404)
    expect(answer.json).toMatchObject({ error: { type: "NOT_FOUND" } })
  })
})

describe("result cache", () => {
  it("answers a repeated request from the server's cache, never another tenant's, and logs it", async () => {
    const input = { from: "2025-02-03", to: "2025-02-27" }
    const first = await call("funnel", { key: TENANT_KEYS.acme, input })
    const again = await call("funnel", { key: TENANT_KEYS.acme, input })
    const other = await call("funnel", { key: TENANT_KEYS.globex, input })
    expect([first, again, other].map((answer) => answer.headers.get("x-cache"))).toEqual(["MISS", "HIT", "MISS"])
    expect(again.text).toBe(first.text)
    expect(other.text).not.toBe(first.text)
    expect(demo.output()).toMatch(/^✓ GET \/api\/analytics\/funnel → 200 \(\d+ms, cache hit\)$/m)
  })
})

describe("metrics", () => {
  const requests = async (status: string) => {
    const scrape = await call("metrics", { key: ADMIN_KEY })
    expect(scrape.status).toBe(200)
    return valueOf(parseExposition(scrape.text), "queryserve_requests_total", { endpoint: "funnel", method: "GET", status }) ?? 0
  }

  it("only the admin key scrapes: request counts span every tenant", async () => {
    expect((await call("metrics")).status).toBe(401)
    for (const key of Object.values(TENANT_KEYS)) expect((await call("metrics", { key })).status).toBe(403)
  })

  it("counts the requests sent, by status", async () => {
    const [ok, invalid] = [await requests("200"), await requests("400")]
    for (const key of Object.values(TENANT_KEYS)) expect((await call("funnel", { key, input: RANGE })).status).toBe(200)
    expect((await call("funnel", { key: TENANT_KEYS.acme, input: { from: "2025-13-01", to: "2025-03-31" } })).status).toBe(400)
    expect(await requests("200")).toBe(ok + 2)
    expect(await requests("400")).toBe(invalid + 1)
  })
})

describe("shutdown", () => {
  it("Ctrl-C (SIGINT) stops the server and closes DuckDB, exit code 0", async () => {
    const small = await startDemo(2_000)
    try {
      expect((await fetch(`${small.baseUrl}/tenantSummary`, { headers: { "x-api-key": ADMIN_KEY } })).status).toBe(403)
      expect(await small.stop("SIGINT")).toBe(0)
      expect(small.output()).toMatch(/\[demo\] SIGINT: stopping\n\[demo\] stopped\n$/)
    } finally {
      await small.stop("SIGKILL")
    }
  }, 60_000)

  it("SIGTERM does the same, and the port is closed afterwards", async () => {
    expect(await demo.stop("SIGTERM")).toBe(0)
    expect(demo.output()).toMatch(/\[demo\] SIGTERM: stopping\n\[demo\] stopped\n$/)
    await expect(fetch(`${demo.baseUrl}/tenantSummary`)).rejects.toThrow()
  })
})
