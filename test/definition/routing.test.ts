import { defineServe } from "queryserve"
import { describe, expect, it } from "vitest"

const api = defineServe({ queries: { revenue: () => 1, export: { method: "POST", query: () => 2 } } })

describe("routing and request ids", () => {
  it("answers an unknown route with 404 NOT_FOUND", async () => {
    const response = await api.handler({ method: "GET", path: "/api/analytics/nope" })
    expect(response.status).toBe(404)
    expect(JSON.parse(response.body!)).toEqual({ error: { type: "NOT_FOUND", message: "No route for GET /api/analytics/nope" } })
  })

  it("answers a known path with another method 405, with Allow", async () => {
    const response = await api.handler({ method: "DELETE", path: "/api/analytics/revenue" })
    expect(response.status).toBe(405)
    expect(response.headers.allow).toBe("GET, HEAD")
    expect(JSON.parse(response.body!).error.type).toBe("NOT_FOUND")
    const post = await api.handler({ method: "GET", path: "/api/analytics/export" })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe("POST")
  })

  it("serves HEAD for GET endpoints without a body, and tolerates a trailing slash", async () => {
    const head = await api.handler({ method: "HEAD", path: "/api/analytics/revenue" })
    expect(head.status).toBe(200)
    expect(head.body).toBeNull()
    expect((await api.handler({ method: "GET", path: "/api/analytics/revenue/" })).body).toBe("1")
  })

  it("echoes a safe x-request-id, preferring it over x-trace-id", async () => {
    const both = await api.handler({ method: "GET", path: "/api/analytics/revenue", headers: { "x-request-id": "abc-1", "x-trace-id": "trace-2" } })
    expect(both.headers["x-request-id"]).toBe("abc-1")
    const trace = await api.handler({ method: "GET", path: "/api/analytics/revenue", headers: { "X-Trace-Id": "trace.2:x_y" } })
    expect(trace.headers["x-request-id"]).toBe("trace.2:x_y")
  })

  it("replaces an unsafe or overlong request id with a fresh UUID, also on errors", async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    for (const bad of ["evil\r\nset-cookie: x=1", "a".repeat(129), "<script>", ""]) {
      const response = await api.handler({ method: "GET", path: "/api/analytics/nope", headers: { "x-request-id": bad } })
      expect(response.headers["x-request-id"]).toMatch(uuid)
    }
    const generated = new Set<string>()
    for (let i = 0; i < 50; i++) generated.add((await api.handler({ method: "GET", path: "/api/analytics/revenue" })).headers["x-request-id"]!)
    expect(generated.size).toBe(50)
  })

  it("generates random version 4 UUIDs, distinct across the batches they are made in", async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    const ids: Array<string> = []
    for (let i = 0; i < 1_000; i++) ids.push((await api.handler({ method: "GET", path: "/api/analytics/revenue" })).headers["x-request-id"]!)
    for (const id of ids) expect(id).toMatch(uuid)
    expect(new Set(ids).size).toBe(ids.length)
    // Every place but the version digit and the dashes varies (a counter or a repeated batch would not).
    for (let place = 0; place < 36; place++) {
      if (place === 8 || place === 13 || place === 14 || place === 18 || place === 23) continue
      const digits = new Set(ids.map((id) => id[place]))
      expect(digits.size, `place ${place}`).toBeGreaterThanOrEqual(place === 19 ? 4 : 12)
    }
  })
})
