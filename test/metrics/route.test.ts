/**
 * The metrics route: its auth (global strategies, roles, public), its path, HEAD, its headers, that it
 * is no endpoint (not in the OpenAPI document, not counted), and that nothing exists with metrics off.
 */
import { apiKeyAuth, defineServe, Metrics, type ServeLifecycleHooks, type ServeResponse } from "queryserve"
import { describe, expect, it, vi } from "vitest"
import { parseExposition, valueOf } from "../support/prometheus.js"

const keys = { "ops-key": { roles: ["ops"] }, "viewer-key": { roles: ["viewer"] } }
const queries = { revenue: () => ({ total: 1 }) }
const auth = apiKeyAuth({ header: "x-api-key", keys })

const get = (api: { handler: (request: { method: string; path: string; headers: Record<string, string> }) => unknown }, path: string, headers: Record<string, string> = {}, method = "GET") =>
  Promise.resolve(api.handler({ method, path, headers })) as Promise<ServeResponse>

const envelope = (response: ServeResponse) => JSON.parse(response.body!) as { error: { type: string; details?: { reason?: string } } }

describe("the metrics route", () => {
  it("is behind the global strategies: 401 without or with a wrong key, 200 with a valid one", async () => {
    const api = defineServe({ queries, auth, metrics: true })
    const missing = await get(api, "/api/analytics/metrics")
    expect(missing.status).toBe(401)
    expect(envelope(missing).error).toMatchObject({ type: "UNAUTHORIZED", details: { reason: "missing_credentials" } })
    expect(missing.headers["x-request-id"]).toBeDefined()
    const wrong = await get(api, "/api/analytics/metrics", { "x-api-key": "guess" })
    expect(wrong.status).toBe(401)
    expect(envelope(wrong).error.details?.reason).toBe("invalid_credentials")

    const ok = await get(api, "/api/analytics/metrics", { "x-api-key": "viewer-key" })
    expect(ok.status).toBe(200)
    expect(ok.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8")
    expect(ok.headers["cache-control"]).toBe("no-store")
    expect(ok.headers["x-request-id"]).toBeDefined()
    expect(parseExposition(ok.body!).types.get("queryserve_requests_total")).toBe("counter")
    await api.dispose()
  })

  it("with roles, needs a caller holding one of them (403 missing_role otherwise)", async () => {
    const api = defineServe({ queries, auth, metrics: { roles: ["ops", "admin"] } })
    const viewer = await get(api, "/api/analytics/metrics", { "x-api-key": "viewer-key" })
    expect(viewer.status).toBe(403)
    expect(envelope(viewer).error).toMatchObject({ type: "FORBIDDEN", details: { reason: "missing_role" } })
    expect((await get(api, "/api/analytics/metrics")).status).toBe(401)
    expect((await get(api, "/api/analytics/metrics", { "x-api-key": "ops-key" })).status).toBe(200)
    await api.dispose()
  })

  it("tells the auth hooks of its refusals, as $metrics: 401s to onAuthFailure, 403s to onAuthorizationFailure", async () => {
    const onAuthFailure = vi.fn<NonNullable<ServeLifecycleHooks["onAuthFailure"]>>()
    const onAuthorizationFailure = vi.fn<NonNullable<ServeLifecycleHooks["onAuthorizationFailure"]>>()
    const api = defineServe({ queries, auth, metrics: { roles: ["ops"] }, hooks: { onAuthFailure, onAuthorizationFailure } })
    const wrong = await get(api, "/api/analytics/metrics", { "x-api-key": "guess" })
    expect(onAuthFailure).toHaveBeenCalledTimes(1)
    expect(onAuthFailure.mock.calls[0]![0]).toMatchObject({ queryKey: "$metrics", reason: "invalid_credentials", requestId: wrong.headers["x-request-id"] })
    expect(onAuthorizationFailure).not.toHaveBeenCalled()
    await get(api, "/api/analytics/metrics", { "x-api-key": "viewer-key" })
    expect(onAuthorizationFailure).toHaveBeenCalledTimes(1)
    expect(onAuthorizationFailure.mock.calls[0]![0]).toMatchObject({ queryKey: "$metrics", reason: "missing_role", required: ["ops"] })
    await get(api, "/api/analytics/metrics", { "x-api-key": "ops-key" })
    expect([onAuthFailure.mock.calls.length, onAuthorizationFailure.mock.calls.length]).toEqual([1, 1])
    await api.dispose()
  })

  it("with public: true, answers without credentials although the API has strategies", async () => {
    const api = defineServe({ queries, auth, metrics: { public: true } })
    expect((await get(api, "/api/analytics/metrics")).status).toBe(200)
    expect((await get(api, "/api/analytics/revenue")).status).toBe(401)
    await api.dispose()
  })

  it("never opens by accident: 401 on an API without strategies unless public, and guarded once useAuth adds one", async () => {
    const closed = defineServe({ queries, metrics: true })
    const refused = await get(closed, "/api/analytics/metrics")
    expect(refused.status).toBe(401)
    expect(JSON.parse(refused.body!).error.type).toBe("UNAUTHORIZED")
    await closed.dispose()
    const open = defineServe({ queries, metrics: { public: true } })
    expect((await get(open, "/api/analytics/metrics")).status).toBe(200)
    await open.dispose()
    const api = defineServe({ queries, metrics: { roles: ["ops"] } })
    api.useAuth(auth)
    expect((await get(api, "/api/analytics/metrics")).status).toBe(401)
    expect((await get(api, "/api/analytics/metrics", { "x-api-key": "ops-key" })).status).toBe(200)
    await api.dispose()
  })

  it("moves with `path` (under basePath) and answers HEAD without a body", async () => {
    const api = defineServe({ queries, basePath: "/v2", metrics: { path: "/internal/prometheus", public: true } })
    expect((await get(api, "/v2/metrics")).status).toBe(404)
    const moved = await get(api, "/v2/internal/prometheus")
    expect(moved.status).toBe(200)
    const head = await get(api, "/v2/internal/prometheus", {}, "HEAD")
    expect(head.status).toBe(200)
    expect(head.body).toBeNull()
    expect(head.headers["content-type"]).toBe(moved.headers["content-type"])
    await api.dispose()
  })

  it("is not an endpoint: not in describe() nor the OpenAPI document, and scrapes are not counted", async () => {
    const api = defineServe({ queries, metrics: { public: true } })
    expect(api.describe().map((endpoint) => endpoint.key)).toEqual(["revenue"])
    const document = JSON.parse((await get(api, "/api/analytics/openapi.json")).body!) as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).toEqual(["/api/analytics/revenue"])
    await get(api, "/api/analytics/metrics")
    const metrics = parseExposition((await get(api, "/api/analytics/metrics")).body!)
    expect(metrics.samples.filter((sample) => sample.name.startsWith("queryserve_requests"))).toEqual([])
    await api.dispose()
  })

  it("does not exist with metrics off, and nothing listens to the query events", async () => {
    for (const metrics of [undefined, false] as const) {
      const api = defineServe({ queries, metrics })
      expect((await get(api, "/api/analytics/metrics")).status).toBe(404)
      expect(api.queryLogger.listenerCount).toBe(0)
    }
  })

  it("refuses contradicting options and a path an endpoint already has, when the API is defined", () => {
    expect(() => defineServe({ queries, auth, metrics: { public: true, roles: ["ops"] } })).toThrow(/roles/)
    expect(() => defineServe({ queries, metrics: { buckets: [1, 0.5] } })).toThrow(/buckets/)
    expect(() => defineServe({ queries, metrics: { buckets: [] } })).toThrow(/buckets/)
    expect(() => defineServe({ queries: { metrics: () => 1 }, metrics: true })).toThrow(/Duplicate route GET \/api\/analytics\/metrics/)
  })

  it("serves the Metrics service of the runtime: a test layer replaces prom-client", async () => {
    const recording = Metrics.recording()
    const api = defineServe({ queries, metrics: { public: true }, layer: recording.layer })
    await get(api, "/api/analytics/revenue")
    await get(api, "/api/analytics/nowhere")
    const scrape = await get(api, "/api/analytics/metrics")
    expect(scrape.body).toBe("revenue GET 200\n")
    expect(recording.metrics.events.map((event) => event.status)).toEqual(["started", "completed"])
    await api.dispose()
  })

  it("keeps counting after a scrape: counters only grow", async () => {
    const api = defineServe({ queries, metrics: { public: true } })
    const count = async () =>
      valueOf(parseExposition((await get(api, "/api/analytics/metrics")).body!), "queryserve_requests_total", {
        endpoint: "revenue",
        method: "GET",
        status: "200"
      })
    await get(api, "/api/analytics/revenue")
    expect(await count()).toBe(1)
    expect(await count()).toBe(1)
    await get(api, "/api/analytics/revenue")
    await get(api, "/api/analytics/revenue")
    expect(await count()).toBe(3)
    await api.dispose()
  })
})
