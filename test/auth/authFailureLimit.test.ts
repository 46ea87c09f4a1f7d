/**
 * Regression: key and token guessing was never throttled (rate limits run after authentication).
 * `authFailureLimit` counts failed authentications per client address and answers 429 before any
 * strategy runs once `max` is reached.
 */
import { ManagedRuntime } from "effect"
import {
  apiKeyAuth,
  type AuthFailureLimitOptions,
  defineServe,
  makeMemoryRateLimitStore,
  RateLimitStore,
  type RateLimitStoreService,
  redisRateLimitStoreLayer,
  type ServeHandler,
  type ServeRequest,
  Unauthorized
} from "queryserve"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../support/redisServer.js"

const KEYS = { "good-key": { name: "analyst" } }

const makeApi = (limit: AuthFailureLimitOptions) => {
  const keys = apiKeyAuth({ keys: KEYS })
  const strategy = vi.fn(keys)
  const api = defineServe({
    auth: Object.assign(strategy, { securityScheme: keys.securityScheme }),
    authFailureLimit: limit,
    queries: { me: ({ ctx }: { ctx: { auth: unknown } }) => ctx.auth, open: { auth: null, query: () => "open" } }
  })
  return { api, strategy }
}

const request = (address: string, key?: string, extra: Record<string, string> = {}, path = "me"): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${path}`,
  headers: { ...(key === undefined ? {} : { "x-api-key": key }), ...extra },
  remoteAddress: address
})

const status = async (api: { readonly handler: ServeHandler }, req: ServeRequest) => (await api.handler(req)).status

describe("authFailureLimit", () => {
  it("answers 429 with Retry-After once an address reached max failures, before any strategy runs, even for a good key", async () => {
    const { api, strategy } = makeApi({ max: 3, windowMs: 60_000 })
    for (let i = 0; i < 3; i++) expect(await status(api, request("203.0.113.9", `guess-${i}`))).toBe(401)
    strategy.mockClear()
    const blocked = await api.handler(request("203.0.113.9", "good-key"))
    expect(blocked.status).toBe(429)
    expect(blocked.headers["retry-after"]).toMatch(/^\d+$/)
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(50)
    expect(JSON.parse(blocked.body!).error).toMatchObject({ type: "RATE_LIMITED", message: expect.stringContaining("failed authentication") })
    expect(strategy).not.toHaveBeenCalled()
    // Another address is not affected; requests without credentials and public endpoints are not counted.
    expect(await status(api, request("203.0.113.10", "good-key"))).toBe(200)
    for (let i = 0; i < 10; i++) expect(await status(api, request("203.0.113.11"))).toBe(401)
    expect(await status(api, request("203.0.113.11", "good-key"))).toBe(200)
    expect(await status(api, request("203.0.113.9", undefined, {}, "open"))).toBe(200)
  })

  it("admits the address again when the window ends", async () => {
    const { api } = makeApi({ max: 2, windowMs: 300 })
    for (let i = 0; i < 2; i++) expect(await status(api, request("198.51.100.7", "bad"))).toBe(401)
    expect(await status(api, request("198.51.100.7", "good-key"))).toBe(429)
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(await status(api, request("198.51.100.7", "good-key"))).toBe(200)
  })

  it("with trustProxy counts by the address the proxy forwarded", async () => {
    const { api } = makeApi({ max: 2, windowMs: 60_000, trustProxy: true })
    const viaProxy = (client: string, key: string) => request("10.0.0.1", key, { "x-forwarded-for": client })
    for (let i = 0; i < 2; i++) expect(await status(api, viaProxy("192.0.2.1", "bad"))).toBe(401)
    expect(await status(api, viaProxy("192.0.2.1", "good-key"))).toBe(429)
    expect(await status(api, viaProxy("192.0.2.2", "good-key"))).toBe(200)
  })

  it("makes no store call for callers who authenticate fine", async () => {
    const calls: Array<string> = []
    const inner = makeMemoryRateLimitStore()
    const counting: RateLimitStoreService = {
      increment: (key, windowMs) => (calls.push(`increment ${key}`), inner.increment(key, windowMs)),
      getTtl: (key) => (calls.push(`getTtl ${key}`), inner.getTtl(key)),
      reset: (key) => (calls.push(`reset ${key}`), inner.reset(key))
    }
    const { api } = makeApi({ max: 5, windowMs: 60_000, store: counting })
    for (let i = 0; i < 100; i++) expect(await status(api, request(`192.0.2.${i % 7}`, "good-key"))).toBe(200)
    expect(calls).toEqual([])
    expect(await status(api, request("192.0.2.1", "bad"))).toBe(401)
    expect(calls).toEqual(["increment 192.0.2.1", "getTtl 192.0.2.1"])
  })

  it("lists 429 among the error responses of authenticated endpoints in the OpenAPI document", () => {
    const { api } = makeApi({ max: 5, windowMs: 60_000 })
    const statuses = Object.fromEntries(api.describe().map((endpoint) => [endpoint.key, endpoint.errorStatuses]))
    expect(statuses.me).toContain(429)
    expect(statuses.open).not.toContain(429)
  })

  it("throttles the MCP and metrics routes too, which authenticate with the same strategies", async () => {
    const api = defineServe({
      auth: apiKeyAuth({ keys: KEYS }),
      authFailureLimit: { max: 2, windowMs: 60_000 },
      mcp: true,
      metrics: true,
      queries: { me: ({ ctx }: { ctx: { auth: unknown } }) => ctx.auth }
    })
    const mcp = (address: string, key: string) =>
      api.handler({
        method: "POST",
        path: "/api/analytics/mcp",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": key },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        remoteAddress: address
      })
    const metrics = (address: string, key: string) => api.handler(request(address, key, {}, "metrics"))
    for (let i = 0; i < 2; i++) expect((await mcp("192.0.2.50", "bad")).status).toBe(401)
    expect((await mcp("192.0.2.50", "good-key")).status).toBe(429)
    expect((await metrics("192.0.2.50", "good-key")).status).toBe(429)
    expect((await status(api, request("192.0.2.50", "good-key")))).toBe(429)
    // Failures on the metrics route count as well.
    for (let i = 0; i < 2; i++) expect((await metrics("192.0.2.51", "bad")).status).toBe(401)
    expect((await mcp("192.0.2.51", "good-key")).status).toBe(429)
    expect((await mcp("192.0.2.52", "good-key")).status).toBe(200)
    await api.dispose()
  })

  it("refuses options that cannot work at defineServe", () => {
    expect(() => makeApi({ max: 0, windowMs: 1000 })).toThrow(/authFailureLimit\.max must be a whole number/)
    expect(() => makeApi({ max: 5, windowMs: -1 })).toThrow(/authFailureLimit\.windowMs must be a positive number/)
  })
})

describe("authFailureLimit and MCP", () => {
  it("counts one failure per HTTP request, however many tools with strategies of their own it authenticates for", async () => {
    const ownKey = { auth: apiKeyAuth({ keys: KEYS }), query: () => "mine" }
    const api = defineServe({
      mcp: true,
      authFailureLimit: { max: 3, windowMs: 60_000 },
      queries: { a: ownKey, b: ownKey, c: ownKey, d: ownKey, e: ownKey }
    })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": "guess" }
      const list = await fetch(`${server.url}/api/analytics/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect((await list.json()).result.tools).toEqual([])
      // Five endpoints refused the key in that one request: one guess, two left before the 429.
      for (let i = 0; i < 2; i++) expect((await fetch(`${server.url}/api/analytics/a`, { headers: { "x-api-key": `guess-${i}` } })).status).toBe(401)
      expect((await fetch(`${server.url}/api/analytics/a`, { headers: { "x-api-key": "good-key" } })).status).toBe(429)
    } finally {
      await server.stop()
      await api.dispose()
    }
  })

  // Listing tools tells a strategy each tool's endpoint; one that grants the key only some of them
  // refuses the others. Credentials accepted in the same request are no guess.
  it("counts nothing for tools refused to credentials the same MCP request was accepted with", async () => {
    const api = defineServe({
      mcp: true,
      authFailureLimit: { max: 2, windowMs: 60_000 },
      auth: ({ request, endpoint }) => {
        const key = request.headers?.["x-api-key"]
        if (key === undefined) return null
        // A key it knows but not for this endpoint: refused as invalid, which counts over HTTP.
        if (key !== "viewer" || endpoint.key === "payroll") {
          throw new Unauthorized({ message: "not a key for this endpoint", reason: "invalid_credentials" })
        }
        return { userId: "viewer" }
      },
      queries: { revenue: () => "revenue", payroll: () => "payroll" }
    })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": "viewer" }
      const rpc = (id: number, method: string, params?: unknown) =>
        fetch(`${server.url}/api/analytics/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) })
      for (let id = 1; id <= 4; id++) {
        const listed = (await (await rpc(id, "tools/list")).json()).result.tools
        expect(listed.map((tool: { name: string }) => tool.name)).toEqual(["revenue"])
      }
      const refused = (await (await rpc(5, "tools/call", { name: "payroll" })).json()).result
      expect(refused.isError).toBe(true)
      expect((await fetch(`${server.url}/api/analytics/revenue`, { headers: { "x-api-key": "viewer" } })).status).toBe(200)
      // Asking the route itself is a refused request, and counts as over HTTP.
      for (let i = 0; i < 2; i++) expect((await fetch(`${server.url}/api/analytics/payroll`, { headers: { "x-api-key": "viewer" } })).status).toBe(401)
      expect((await fetch(`${server.url}/api/analytics/revenue`, { headers: { "x-api-key": "viewer" } })).status).toBe(429)
    } finally {
      await server.stop()
      await api.dispose()
    }
  })
})

describe("authFailureLimit and MCP, an endpoint with a strategy of its own", () => {
  it("counts a guess at the endpoint's own credential through a tool, though the request's global key was accepted", async () => {
    const api = defineServe({
      mcp: true,
      authFailureLimit: { max: 3, windowMs: 60_000 },
      auth: apiKeyAuth({ keys: KEYS }),
      queries: {
        secrets: { auth: apiKeyAuth({ header: "x-admin-key", keys: { "admin-secret": { name: "admin" } } }), query: () => "secret" }
      }
    })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const call = (id: number, adminKey: string) =>
        fetch(`${server.url}/api/analytics/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": "good-key", "x-admin-key": adminKey },
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "secrets" } })
        })
      for (let id = 0; id < 3; id++) {
        const refused = await call(id, `guess-${id}`)
        expect([refused.status, (await refused.json()).result.isError]).toEqual([200, true])
      }
      // Three guesses used the address's failures: the right key comes too late, as on the route.
      expect((await call(3, "admin-secret")).status).toBe(429)
    } finally {
      await server.stop()
      await api.dispose()
    }
  })
})

const skip = redisUnavailable()

describe.skipIf(skip !== undefined)("authFailureLimit over a shared Redis store", () => {
  let redis: RedisServer
  let runtime: ManagedRuntime.ManagedRuntime<RateLimitStore, never>
  beforeAll(async () => {
    redis = await startRedis()
    runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url: redis.url, prefix: `auth-${Date.now()}:` }))
  })
  afterAll(async () => {
    await runtime?.dispose()
    await redis?.stop()
  })

  it("two processes share the count: the second blocks an address at its own first failure from it", async () => {
    const store = await runtime.runPromise(RateLimitStore)
    // The layer does not wait for Redis; wait for the connection here.
    await vi.waitFor(() => Promise.resolve(store.getTtl("connected")), { timeout: 5_000 })
    const first = makeApi({ max: 3, windowMs: 60_000, store }).api
    const second = makeApi({ max: 3, windowMs: 60_000, store }).api
    const address = "203.0.113.77"
    for (let i = 0; i < 3; i++) expect(await status(first, request(address, "bad"))).toBe(401)
    expect(await status(first, request(address, "good-key"))).toBe(429)
    // The second process has seen nothing from this address yet: it learns the shared count at its first failure.
    expect(await status(second, request(address, "good-key"))).toBe(200)
    expect(await status(second, request(address, "bad"))).toBe(401)
    await vi.waitFor(async () => expect(await status(second, request(address, "good-key"))).toBe(429), { timeout: 2_000 })
  })
})
