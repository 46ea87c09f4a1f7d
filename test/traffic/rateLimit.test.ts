import { Effect } from "effect"
import {
  defineServe,
  makeMemoryRateLimitStore,
  memoryRateLimitStoreLayer,
  rateLimit,
  RateLimitStore,
  type RateLimitStoreService,
  type ServeRequest,
  startNodeServer
} from "queryserve"
import { afterEach, describe, expect, it, vi } from "vitest"

const request = (overrides: Partial<ServeRequest> = {}): ServeRequest => ({
  method: "GET",
  path: "/api/analytics/ping",
  headers: {},
  remoteAddress: "198.51.100.1",
  ...overrides
})

const limitedApi = (options: Parameters<typeof rateLimit>[0]) =>
  defineServe({ queries: { ping: { query: () => "pong", middlewares: [rateLimit(options)] }, open: () => "free" } })

const envelope = (body: string | null) => JSON.parse(body ?? "null") as { error: { type: string; details?: Record<string, unknown> } }

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe("rateLimit", () => {
  it("puts the limit headers on every response and answers 429 RATE_LIMITED with Retry-After past max", async () => {
    const api = limitedApi({ max: 2, windowMs: 30_000 })
    const first = await api.handler(request())
    expect(first.status).toBe(200)
    expect(first.headers).toMatchObject({ "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1", "x-ratelimit-reset": "30" })
    expect((await api.handler(request())).headers["x-ratelimit-remaining"]).toBe("0")
    const limited = await api.handler(request())
    expect(limited.status).toBe(429)
    expect(limited.headers).toMatchObject({ "retry-after": "30", "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0" })
    expect(envelope(limited.body).error).toMatchObject({ type: "RATE_LIMITED", details: { retryAfterSeconds: 30 } })
    // Endpoints without the middleware are neither limited nor labelled.
    expect((await api.handler(request({ path: "/api/analytics/open" }))).headers["x-ratelimit-limit"]).toBeUndefined()
  })

  it("defaults to 100 requests per 60 s", async () => {
    const api = limitedApi(undefined)
    const responses = []
    for (let i = 0; i < 101; i++) responses.push(await api.handler(request()))
    expect(responses[0]!.headers).toMatchObject({ "x-ratelimit-limit": "100", "x-ratelimit-reset": "60" })
    expect(responses[99]!.status).toBe(200)
    expect(responses[100]!.status).toBe(429)
  })

  it("works as a global middleware across endpoints", async () => {
    const api = defineServe({ middlewares: [rateLimit({ max: 1 })], queries: { a: () => 1, b: () => 2 } })
    expect((await api.handler(request({ path: "/api/analytics/a" }))).status).toBe(200)
    expect((await api.handler(request({ path: "/api/analytics/b" }))).status).toBe(429)
  })

  it("starts a new window once the old one has passed", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const api = limitedApi({ max: 1, windowMs: 10_000 })
    expect((await api.handler(request())).status).toBe(200)
    vi.advanceTimersByTime(4_000)
    const limited = await api.handler(request())
    expect(limited.status).toBe(429)
    expect(limited.headers["retry-after"]).toBe("6")
    vi.advanceTimersByTime(6_000)
    expect((await api.handler(request())).status).toBe(200)
  })

  describe("keys", () => {
    it("counts each client address separately and ignores X-Forwarded-For by default", async () => {
      const api = limitedApi({ max: 1 })
      expect((await api.handler(request())).status).toBe(200)
      expect((await api.handler(request({ remoteAddress: "198.51.100.2" }))).status).toBe(200)
      const spoofed = await api.handler(request({ headers: { "x-forwarded-for": "192.0.2.99" } }))
      expect(spoofed.status).toBe(429)
    })

    it("with trustProxy reads the address the trusted proxy appended, never the client-written part", async () => {
      const api = limitedApi({ max: 1, trustProxy: true })
      const viaProxy = (forwarded: string) =>
        api.handler(request({ remoteAddress: "10.0.0.1", headers: { "X-Forwarded-For": forwarded } }))
      expect((await viaProxy("192.0.2.10")).status).toBe(200)
      expect((await viaProxy("192.0.2.11")).status).toBe(200)
      // The client prepended a made-up address; the proxy still appended its real one.
      expect((await viaProxy("203.0.113.200, 192.0.2.10")).status).toBe(429)

      const twoProxies = limitedApi({ max: 1, trustProxy: 2 })
      const viaTwo = (forwarded: string) =>
        twoProxies.handler(request({ remoteAddress: "10.0.0.2", headers: { "x-forwarded-for": forwarded } }))
      expect((await viaTwo("forged, 192.0.2.20, 10.0.0.1")).status).toBe(200)
      expect((await viaTwo("other-forgery, 192.0.2.20, 10.0.0.1")).status).toBe(429)
    })

    it("keyBy picks the key from ctx; null exempts the request", async () => {
      const api = defineServe({
        auth: ({ request }) => ({ id: String(request.headers?.["x-user"]), roles: [] }),
        queries: {
          ping: {
            query: () => "pong",
            middlewares: [rateLimit({ max: 1, keyBy: (ctx) => (ctx.auth?.id === "admin" ? null : String(ctx.auth?.id)) })]
          }
        }
      })
      const as = (user: string) => api.handler(request({ headers: { "x-user": user } }))
      expect((await as("alice")).status).toBe(200)
      expect((await as("alice")).status).toBe(429)
      expect((await as("bob")).status).toBe(200)
      for (let i = 0; i < 3; i++) {
        const admin = await as("admin")
        expect(admin.status).toBe(200)
        expect(admin.headers["x-ratelimit-limit"]).toBeUndefined()
      }
    })

    it("uses the socket address of a real connection, whatever X-Forwarded-For says", async () => {
      const api = limitedApi({ max: 1 })
      const server = await startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1" })
      try {
        const first = await fetch(`${server.url}/api/analytics/ping`, { headers: { "x-forwarded-for": "192.0.2.1" } })
        const second = await fetch(`${server.url}/api/analytics/ping`, { headers: { "x-forwarded-for": "192.0.2.2" } })
        expect([first.status, second.status]).toEqual([200, 429])
      } finally {
        await server.stop()
      }
    })
  })

  describe("a failing store", () => {
    const broken = (mode: "throws" | "rejects"): RateLimitStoreService => {
      const fail = () => {
        if (mode === "throws") throw new Error("store down")
        return Promise.reject(new Error("store down"))
      }
      return { increment: fail, getTtl: fail, reset: fail }
    }

    // Regression: failing open meant "unlimited" while the store was down.
    it.each(["throws", "rejects"] as const)("fails open by default when the store %s: counting in memory, at most max, logging once per outage", async (mode) => {
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined)
      const api = limitedApi({ store: broken(mode), max: 3 })
      for (let i = 0; i < 3; i++) {
        const response = await api.handler(request())
        expect(response.status).toBe(200)
        expect(response.body).toBe('"pong"')
        // The shared count is unknown: no X-RateLimit-* headers.
        expect(response.headers["x-ratelimit-limit"]).toBeUndefined()
      }
      const over = await api.handler(request())
      expect(over.status).toBe(429)
      expect(Number(over.headers["retry-after"])).toBeGreaterThan(0)
      expect(errors).toHaveBeenCalledTimes(1)
      expect(String(errors.mock.calls[0]![0])).toContain("counting in this process's memory")
    })

    it.each(["throws", "rejects"] as const)("with failOpen: false answers 503 when the store %s", async (mode) => {
      vi.spyOn(console, "error").mockImplementation(() => undefined)
      const api = limitedApi({ store: broken(mode), failOpen: false })
      const response = await api.handler(request())
      expect(response.status).toBe(503)
      expect(envelope(response.body).error.type).toBe("SERVICE_UNAVAILABLE")
    })
  })
})

describe("memory RateLimitStore", () => {
  it("implements increment, getTtl and reset with the window starting at count 1", () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const store = makeMemoryRateLimitStore()
    expect(store.getTtl("k")).toBe(0)
    expect(store.increment("k", 1_000)).toBe(1)
    vi.advanceTimersByTime(400)
    expect(store.increment("k", 1_000)).toBe(2)
    expect(store.getTtl("k")).toBe(600)
    store.reset("k")
    expect(store.getTtl("k")).toBe(0)
    expect(store.increment("k", 1_000)).toBe(1)
  })

  it("holds at most maxKeys keys, dropping expired windows first and then the oldest", () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const store = makeMemoryRateLimitStore({ maxKeys: 3 })
    store.increment("old", 100)
    vi.advanceTimersByTime(50)
    store.increment("a", 1_000)
    store.increment("b", 1_000)
    vi.advanceTimersByTime(60)
    // "old" has expired: making room for "c" sweeps it, and "a" and "b" stay.
    store.increment("c", 1_000)
    expect([store.getTtl("old"), store.getTtl("a") > 0, store.getTtl("b") > 0]).toEqual([0, true, true])
    // Full of live windows: the oldest ("a") goes.
    store.increment("d", 1_000)
    expect(store.getTtl("a")).toBe(0)
    expect(["b", "c", "d"].every((key) => store.getTtl(key) > 0)).toBe(true)
    for (let i = 0; i < 1_000; i++) store.increment(`flood-${i}`, 1_000)
    expect(["flood-997", "flood-998", "flood-999"].every((key) => store.getTtl(key) > 0)).toBe(true)
    expect(store.getTtl("flood-996")).toBe(0)
  })

  it("is provided as the RateLimitStore service by memoryRateLimitStoreLayer", () => {
    const secondCount = RateLimitStore.pipe(
      Effect.map((store) => {
        store.increment("k", 1_000)
        return store.increment("k", 1_000)
      }),
      Effect.provide(memoryRateLimitStoreLayer())
    )
    expect(Effect.runSync(secondCount)).toBe(2)
  })
})
