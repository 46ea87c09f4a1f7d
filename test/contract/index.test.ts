import { apiKeyAuth, defineServe } from "queryserve"
import { describe, expect, it } from "vitest"

describe("GET {basePath}", () => {
  it("answers a public index: title, version, documents, endpoints, without credentials", async () => {
    const api = defineServe({
      auth: apiKeyAuth({ validate: (key) => (key === "k" ? { id: "u" } : null) }),
      openapi: { info: { title: "Shop analytics", version: "2.1.0" } },
      queries: { revenue: { summary: "Revenue by day", query: () => [] }, refunds: { method: "POST", query: () => [] } }
    })
    const response = await api.handler({ method: "GET", path: "/api/analytics" })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body!)).toEqual({
      title: "Shop analytics",
      version: "2.1.0",
      docs: "/api/analytics/docs",
      openapi: "/api/analytics/openapi.json",
      endpoints: [
        { key: "revenue", method: "GET", path: "/api/analytics/revenue", summary: "Revenue by day" },
        { key: "refunds", method: "POST", path: "/api/analytics/refunds" }
      ],
      datasets: []
    })
    expect((await api.handler({ method: "GET", path: "/api/analytics/" })).status).toBe(200)
  })

  it("answers also when the OpenAPI document is off, naming no document", async () => {
    const api = defineServe({ openapi: { enabled: false }, queries: { ping: () => ({ ok: true }) } })
    const index = JSON.parse((await api.handler({ method: "GET", path: "/api/analytics" })).body!)
    expect(index.openapi).toBeNull()
    expect(index.docs).toBeNull()
    expect(index.endpoints).toEqual([{ key: "ping", method: "GET", path: "/api/analytics/ping" }])
  })
})
