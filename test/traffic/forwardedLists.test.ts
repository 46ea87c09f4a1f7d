/**
 * Regression: a request whose X-Forwarded-For came as several header lines (an array in `headers`)
 * was keyed on its first line with `trustProxy`: the line the client wrote itself. Each request with
 * a new made-up first line got a new window, and any address could be locked out of `authFailureLimit`.
 */
import { apiKeyAuth, defineServe, rateLimit, type ServeRequest } from "queryserve"
import { describe, expect, it } from "vitest"

const viaProxy = (forwarded: ReadonlyArray<string>, headers: Record<string, string> = {}, path = "ping"): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${path}`,
  headers: { ...headers, "x-forwarded-for": forwarded },
  remoteAddress: "10.0.0.1"
})

describe("X-Forwarded-For given as several header lines", () => {
  it("rateLimit with trustProxy counts from the right across all lines, never the client-written first one", async () => {
    const api = defineServe({ queries: { ping: { query: () => "pong", middlewares: [rateLimit({ max: 2, trustProxy: true })] } } })
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await api.handler(viaProxy([`198.51.100.${i}`, "203.0.113.7"]))).status)
    expect(statuses).toEqual([200, 200, 429, 429])
    // Another client behind the same proxy has its own window.
    expect((await api.handler(viaProxy(["198.51.100.1", "203.0.113.8"]))).status).toBe(200)
  })

  it("counts hops across lines as across the entries of one line", async () => {
    const api = defineServe({ queries: { ping: { query: () => "pong", middlewares: [rateLimit({ max: 1, trustProxy: 2 })] } } })
    // Two proxies: the first appended the client (192.0.2.20) on the client's line, the second its own line.
    expect((await api.handler(viaProxy(["forged, 192.0.2.20", "10.0.0.2"]))).status).toBe(200)
    expect((await api.handler(viaProxy(["other-forgery", "192.0.2.20, 10.0.0.2"]))).status).toBe(429)
  })

  it("authFailureLimit with trustProxy counts the failures of the address the proxy appended", async () => {
    const api = defineServe({
      auth: apiKeyAuth({ keys: { "good-key": { name: "analyst" } } }),
      authFailureLimit: { max: 2, windowMs: 60_000, trustProxy: true },
      queries: { me: () => "me" }
    })
    const guess = (forged: string, key: string) => api.handler(viaProxy([forged, "203.0.113.9"], { "x-api-key": key }, "me"))
    expect((await guess("198.51.100.1", "bad-1")).status).toBe(401)
    expect((await guess("198.51.100.2", "bad-2")).status).toBe(401)
    // A new made-up first line does not buy new guesses.
    expect((await guess("198.51.100.3", "good-key")).status).toBe(429)
    // And the address a client writes first is not the one locked out.
    expect((await api.handler(viaProxy(["203.0.113.9", "192.0.2.50"], { "x-api-key": "good-key" }, "me"))).status).toBe(200)
  })
})
