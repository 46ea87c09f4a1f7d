/**
 * The series a scrape reports, parsed from the Prometheus text and compared with the requests sent:
 * every status class, rate-limited callers, the duration histogram, in-flight requests, result-cache
 * lookups and the process's default metrics.
 */
import { Schema } from "effect"
import { apiKeyAuth, defineServe, rateLimit, type ServeRequest } from "queryserve"
import { Histogram, Registry } from "prom-client"
import { describe, expect, it } from "vitest"
import { type Exposition, parseExposition, samplesOf, valueOf } from "../support/prometheus.js"

const KEY = { "x-api-key": "ops-key" }

const request = (method: string, path: string, query: Record<string, string> = {}, headers: Record<string, string> = KEY): ServeRequest => ({
  method,
  path: `/api/analytics/${path}`,
  query,
  headers,
  remoteAddress: "198.51.100.7"
})

const makeApi = () =>
  defineServe({
    queries: {
      revenue: { inputSchema: Schema.Struct({ region: Schema.Literal("eu", "us") }), query: () => ({ total: 1 }) },
      broken: () => {
        throw new Error("warehouse offline")
      },
      limited: { query: () => ({ ok: true }), middlewares: [rateLimit({ max: 2 })] },
      orders: { method: "POST", query: () => ({ accepted: true }) }
    },
    auth: apiKeyAuth({ header: "x-api-key", keys: { "ops-key": { roles: ["ops"] } } }),
    metrics: true
  })

type Api = ReturnType<typeof makeApi>

const scrape = async (api: { handler: Api["handler"] }): Promise<Exposition> => {
  const response = await api.handler(request("GET", "metrics"))
  expect(response.status).toBe(200)
  return parseExposition(response.body!)
}

const requestsOf = (exposition: Exposition, endpoint: string, method: string, status: number) =>
  valueOf(exposition, "queryserve_requests_total", { endpoint, method, status: String(status) })

describe("metrics: true", () => {
  it("counts every answered request by endpoint, method and status, errors and 429s included", async () => {
    const api = makeApi()
    const sent: Array<[ServeRequest, number]> = [
      [request("GET", "revenue", { region: "eu" }), 200],
      [request("GET", "revenue", { region: "us" }), 200],
      [request("GET", "revenue", { region: "eu" }), 200],
      [request("HEAD", "revenue", { region: "eu" }), 200],
      [request("GET", "revenue", { region: "mars" }), 400],
      [request("GET", "revenue"), 400],
      [request("GET", "revenue", { region: "eu" }, {}), 401],
      [request("GET", "broken"), 500],
      [request("GET", "broken"), 500],
      [request("GET", "limited"), 200],
      [request("GET", "limited"), 200],
      [request("GET", "limited"), 429],
      [request("GET", "limited"), 429],
      [request("GET", "limited"), 429],
      [request("POST", "orders"), 200]
    ]
    for (const [sentRequest, status] of sent) expect((await api.handler(sentRequest)).status).toBe(status)
    // Not endpoints: an unknown path (404), another method on a known path (405), the scrape itself.
    expect((await api.handler(request("GET", "nowhere"))).status).toBe(404)
    expect((await api.handler(request("DELETE", "revenue"))).status).toBe(405)
    await scrape(api)

    const metrics = await scrape(api)
    expect(metrics.types.get("queryserve_requests_total")).toBe("counter")
    expect(samplesOf(metrics, "queryserve_requests_total").map((s) => [s.labels, s.value])).toEqual(
      expect.arrayContaining([
        [{ endpoint: "revenue", method: "GET", status: "200" }, 3],
        [{ endpoint: "revenue", method: "HEAD", status: "200" }, 1],
        [{ endpoint: "revenue", method: "GET", status: "400" }, 2],
        [{ endpoint: "revenue", method: "GET", status: "401" }, 1],
        [{ endpoint: "broken", method: "GET", status: "500" }, 2],
        [{ endpoint: "limited", method: "GET", status: "200" }, 2],
        [{ endpoint: "limited", method: "GET", status: "429" }, 3],
        [{ endpoint: "orders", method: "POST", status: "200" }, 1]
      ])
    )
    // Exactly the requests sent: nothing else was counted.
    const total = samplesOf(metrics, "queryserve_requests_total").reduce((sum, sample) => sum + sample.value, 0)
    expect(total).toBe(sent.length)

    expect(metrics.types.get("queryserve_rate_limited_total")).toBe("counter")
    expect(samplesOf(metrics, "queryserve_rate_limited_total")).toEqual([
      { name: "queryserve_rate_limited_total", labels: { endpoint: "limited" }, value: 3 }
    ])

    expect(metrics.types.get("queryserve_request_duration_seconds")).toBe("histogram")
    const perEndpoint = { revenue: 7, broken: 2, limited: 5, orders: 1 }
    for (const [endpoint, count] of Object.entries(perEndpoint)) {
      expect(valueOf(metrics, "queryserve_request_duration_seconds_count", { endpoint })).toBe(count)
      expect(valueOf(metrics, "queryserve_request_duration_seconds_bucket", { endpoint, le: "+Inf" })).toBe(count)
      expect(valueOf(metrics, "queryserve_request_duration_seconds_sum", { endpoint })).toBeGreaterThan(0)
    }

    expect(metrics.types.get("queryserve_in_flight_requests")).toBe("gauge")
    expect(valueOf(metrics, "queryserve_in_flight_requests")).toBe(0)
    await api.dispose()
  })

  it("counts the requests answered before prom-client finished loading", async () => {
    const api = makeApi()
    // Synchronous answers, right after defineServe: the import of prom-client cannot have finished.
    for (let i = 0; i < 3; i++) expect(api.handler(request("GET", "revenue", { region: "eu" }))).toMatchObject({ status: 200 })
    expect(requestsOf(await scrape(api), "revenue", "GET", 200)).toBe(3)
    await api.dispose()
  })

  it("counts in-process execute/run calls like requests", async () => {
    const api = makeApi()
    await api.run("orders", { context: { auth: { roles: ["ops"] } } })
    await expect(api.run("broken", { context: { auth: { roles: ["ops"] } } })).rejects.toThrow()
    const metrics = await scrape(api)
    expect(requestsOf(metrics, "orders", "POST", 200)).toBe(1)
    expect(requestsOf(metrics, "broken", "GET", 500)).toBe(1)
    await api.dispose()
  })

  it("shows requests in flight while they run, and none once answered", async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const api = defineServe({ queries: { slow: () => gate.then(() => ({ done: true })) }, metrics: { public: true } })
    const scrapeOpen = async () => parseExposition((await api.handler({ method: "GET", path: "/api/analytics/metrics" })).body!)
    const pending = [api.handler({ method: "GET", path: "/api/analytics/slow" }), api.handler({ method: "GET", path: "/api/analytics/slow" })]
    expect(valueOf(await scrapeOpen(), "queryserve_in_flight_requests")).toBe(2)
    release()
    expect((await Promise.all(pending)).map((response) => response.status)).toEqual([200, 200])
    const after = await scrapeOpen()
    expect(valueOf(after, "queryserve_in_flight_requests")).toBe(0)
    expect(valueOf(after, "queryserve_requests_total", { endpoint: "slow", method: "GET", status: "200" })).toBe(2)
    await api.dispose()
  })

  it("counts the same whether the pipeline meters directly (metrics its only listener) or emits events to listeners of yours", async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const api = defineServe({ queries: { slow: () => gate.then(() => ({ done: true })), quick: () => ({}) }, metrics: { public: true } })
    const scrapeOpen = async () => parseExposition((await api.handler({ method: "GET", path: "/api/analytics/metrics" })).body!)
    const quick = () => api.handler({ method: "GET", path: "/api/analytics/quick" })
    // Metrics alone: no event is built; started while metered...
    await quick()
    const slow = api.handler({ method: "GET", path: "/api/analytics/slow" })
    // ...finished with a listener of yours on, which gets events again.
    const seen: Array<string> = []
    const off = api.queryLogger.on((event) => void seen.push(`${event.endpointKey} ${event.status}`))
    await quick()
    release()
    expect((await slow).status).toBe(200)
    off()
    await quick()
    expect(seen).toEqual(["quick started", "quick completed", "slow completed"])
    const metrics = await scrapeOpen()
    expect(valueOf(metrics, "queryserve_requests_total", { endpoint: "quick", method: "GET", status: "200" })).toBe(3)
    expect(valueOf(metrics, "queryserve_requests_total", { endpoint: "slow", method: "GET", status: "200" })).toBe(1)
    expect(valueOf(metrics, "queryserve_request_duration_seconds_count", { endpoint: "quick" })).toBe(3)
    expect(valueOf(metrics, "queryserve_in_flight_requests")).toBe(0)
    await api.dispose()
  })

  it("puts durations in seconds into the configured buckets", async () => {
    const api = defineServe({
      queries: { wait: () => new Promise((resolve) => setTimeout(() => resolve({ waited: true }), 120)), quick: () => ({}) },
      metrics: { buckets: [0.1, 5], public: true }
    })
    await api.handler({ method: "GET", path: "/api/analytics/wait" })
    await api.handler({ method: "GET", path: "/api/analytics/quick" })
    const metrics = parseExposition((await api.handler({ method: "GET", path: "/api/analytics/metrics" })).body!)
    const buckets = (endpoint: string) =>
      samplesOf(metrics, "queryserve_request_duration_seconds_bucket")
        .filter((sample) => sample.labels.endpoint === endpoint)
        .map((sample) => [sample.labels.le, sample.value])
    expect(buckets("wait")).toEqual([["0.1", 0], ["5", 1], ["+Inf", 1]])
    expect(buckets("quick")).toEqual([["0.1", 1], ["5", 1], ["+Inf", 1]])
    const waited = valueOf(metrics, "queryserve_request_duration_seconds_sum", { endpoint: "wait" })!
    expect(waited).toBeGreaterThanOrEqual(0.1)
    expect(waited).toBeLessThan(5)
    await api.dispose()
  })

  it("writes the duration histogram exactly as prom-client's own Histogram writes the same observations", async () => {
    const buckets = [0.005, 0.05, 0.5]
    const api = defineServe({ queries: { a: () => ({}), b: () => ({}) }, metrics: { buckets, public: true } })
    const registry = new Registry()
    const reference = new Histogram({
      name: "queryserve_request_duration_seconds",
      help: "Time from routing to the answer, per endpoint.",
      labelNames: ["endpoint"],
      buckets,
      registers: [registry]
    })
    // On a bound, between bounds, past the last one: each endpoint in the order first seen.
    const observations: Array<[string, number]> = [["b", 5], ["a", 0.5], ["b", 50], ["a", 3], ["a", 5000], ["b", 5]]
    for (const [endpoint, durationMs] of observations) {
      api.queryLogger.emit({ requestId: "r", endpointKey: endpoint, path: `/api/analytics/${endpoint}`, method: "GET", status: "completed", startTime: 0, durationMs, responseStatus: 200 })
      reference.observe({ endpoint }, durationMs / 1000)
    }
    const histogramLines = (text: string) => text.split("\n").filter((line) => line.startsWith("queryserve_request_duration_seconds"))
    const served = (await api.handler(request("GET", "metrics", {}, {}))).body!
    const expected = histogramLines(await registry.metrics())
    expect(expected.length).toBe(2 * (buckets.length + 3))
    expect(histogramLines(served)).toEqual(expected)
    await api.dispose()
  })

  it("counts result-cache hits and misses from the cacheHit of completed query events", async () => {
    const api = makeApi()
    const completed = (cacheHit: boolean | undefined) =>
      api.queryLogger.emit({
        requestId: "r",
        endpointKey: "revenue",
        path: "/api/analytics/revenue",
        method: "GET",
        status: "completed",
        startTime: Date.now(),
        durationMs: 1,
        responseStatus: 200,
        ...(cacheHit === undefined ? {} : { cacheHit })
      })
    completed(true)
    completed(true)
    completed(false)
    completed(undefined)
    const metrics = await scrape(api)
    expect(metrics.types.get("queryserve_result_cache_total")).toBe("counter")
    expect(samplesOf(metrics, "queryserve_result_cache_total").map((s) => [s.labels, s.value])).toEqual([
      [{ endpoint: "revenue", result: "hit" }, 2],
      [{ endpoint: "revenue", result: "miss" }, 1]
    ])
    // Events without a start never push the gauge below zero.
    expect(valueOf(metrics, "queryserve_in_flight_requests")).toBe(0)
    await api.dispose()
  })

  it("adds prom-client's default process metrics", async () => {
    const api = makeApi()
    const metrics = await scrape(api)
    expect(metrics.types.get("process_cpu_user_seconds_total")).toBe("counter")
    expect(valueOf(metrics, "process_resident_memory_bytes")).toBeGreaterThan(0)
    expect(valueOf(metrics, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
    expect(samplesOf(metrics, "nodejs_version_info")[0]?.labels.version).toBe(process.version)
    await api.dispose()
  })

  it("keeps two APIs' series apart", async () => {
    const first = makeApi()
    const second = makeApi()
    await first.handler(request("GET", "revenue", { region: "eu" }))
    await first.handler(request("GET", "revenue", { region: "eu" }))
    await second.handler(request("GET", "revenue", { region: "eu" }))
    expect(requestsOf(await scrape(first), "revenue", "GET", 200)).toBe(2)
    expect(requestsOf(await scrape(second), "revenue", "GET", 200)).toBe(1)
    await Promise.all([first.dispose(), second.dispose()])
  })
})
