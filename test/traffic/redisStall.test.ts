/**
 * Regressions on the Redis rate-limit store:
 * - a stalled Redis (alive, not answering: SIGSTOP) held every rate-limited request for the whole
 *   stall, because node-redis drops its command timeout once a command is written;
 * - the Redis URL, password included, was logged when the store could not connect.
 */
import { ManagedRuntime } from "effect"
import { defineServe, rateLimit, RateLimitStore, type RateLimitStoreService, redisRateLimitStoreLayer, type ServeRequest } from "queryserve"
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../support/redisServer.js"

const skipReason = redisUnavailable()
const get = (path: string): ServeRequest => ({ method: "GET", path: `/api/analytics/${path}`, headers: {}, remoteAddress: "203.0.113.7" })

/** Resolves once `store` answers (the layer does not wait for Redis). */
const connected = (store: RateLimitStoreService) => vi.waitFor(() => Promise.resolve(store.getTtl("probe")), { timeout: 10_000, interval: 50 })

const STORE_TIMEOUT_MS = 250
/** What a loaded 2-core machine may add to the deadline; a stall-long wait would still exceed it by far. */
const MARGIN_MS = 1_000

describe.skipIf(skipReason !== undefined)("rateLimit when Redis stalls (SIGSTOP)", () => {
  let redis: RedisServer
  let runtime: ManagedRuntime.ManagedRuntime<RateLimitStore, never>
  let errors: MockInstance<typeof console.error>

  beforeAll(async () => {
    errors = vi.spyOn(console, "error").mockImplementation(() => undefined)
    redis = await startRedis()
    runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url: redis.url }))
    await connected(await runtime.runPromise(RateLimitStore))
  })
  afterAll(async () => {
    redis?.resume()
    await runtime?.dispose()
    await redis?.stop()
    errors.mockRestore()
  })

  it("answers within the store deadline, failing open or closed as configured, and counts again after", async () => {
    const store = await runtime.runPromise(RateLimitStore)
    const limited = (failOpen: boolean) => rateLimit({ store, max: 1_000, windowMs: 60_000, failOpen, storeTimeoutMs: STORE_TIMEOUT_MS, keyBy: () => `stall-${failOpen}` })
    const api = defineServe({
      queries: {
        open: { query: () => "ok", middlewares: [limited(true)] },
        closed: { query: () => "ok", middlewares: [limited(false)] }
      }
    })
    expect((await api.handler(get("open"))).headers["x-ratelimit-limit"]).toBe("1000")

    redis.pause()
    try {
      const timed = async (path: string) => {
        const started = performance.now()
        const response = await api.handler(get(path))
        return { status: response.status, counted: "x-ratelimit-limit" in response.headers, ms: performance.now() - started }
      }
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => timed(i % 2 === 0 ? "open" : "closed")))
      const slowest = Math.max(...answers.map((answer) => answer.ms))
      console.log(`[stall] 20 requests during a Redis stall: slowest ${Math.round(slowest)} ms (deadline ${STORE_TIMEOUT_MS} ms)`)
      expect(answers.filter((_, i) => i % 2 === 0).map(({ status, counted }) => ({ status, counted }))).toEqual(Array(10).fill({ status: 200, counted: false }))
      expect(answers.filter((_, i) => i % 2 === 1).map(({ status }) => status)).toEqual(Array(10).fill(503))
      expect(slowest).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 5)
      expect(slowest).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS)
    } finally {
      redis.resume()
    }
    await vi.waitFor(async () => expect((await api.handler(get("closed"))).status).toBe(200), { timeout: 5_000 })
    const logged = errors.mock.calls.map(([line]) => String(line))
    expect(logged.filter((line) => line.startsWith("[queryserve] rate-limit store failed"))).toHaveLength(2)
    expect(logged.filter((line) => line.includes("rate-limit store answers again")).length).toBeGreaterThanOrEqual(1)
  })
})

describe.skipIf(skipReason !== undefined)("Redis URLs in logs", () => {
  const PASSWORD = "s3cr3t-hunter2"
  let redis: RedisServer
  let errors: MockInstance<typeof console.error>
  beforeAll(async () => {
    errors = vi.spyOn(console, "error").mockImplementation(() => undefined)
    redis = await startRedis({ password: PASSWORD })
  })
  afterEach(() => errors.mockClear())
  afterAll(async () => {
    await redis?.stop()
    errors.mockRestore()
  })

  const logged = () => errors.mock.calls.map((call) => call.map(String).join(" ")).join("\n")

  it("an outage and its recovery are logged once each, with user and password redacted", async () => {
    const url = `redis://default:${PASSWORD}@127.0.0.1:${redis.port}`
    const runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url }))
    try {
      const store = await runtime.runPromise(RateLimitStore)
      await connected(store)
      await redis.kill()
      await vi.waitFor(() => expect(logged()).toContain("is unreachable"), { timeout: 5_000 })
      await redis.restart()
      await connected(store)
      await vi.waitFor(() => expect(logged()).toContain("is reachable again"), { timeout: 5_000 })
      const text = logged()
      expect(text).not.toContain(PASSWORD)
      expect(text).toContain(`redis://***@127.0.0.1:${redis.port}`)
      expect(text.split("\n").filter((line) => line.includes("is unreachable"))).toHaveLength(1)
      expect(text.split("\n").filter((line) => line.includes("is reachable again"))).toHaveLength(1)
    } finally {
      await runtime.dispose()
    }
  })

  // Regression: a password given as a query parameter was logged as it was given.
  it("a password given as ?password= is redacted too", async () => {
    const url = `redis://127.0.0.1:9/0?password=${PASSWORD}&Auth=${PASSWORD}-2&db=0`
    const runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url }))
    await runtime.runPromise(RateLimitStore)
    await vi.waitFor(() => expect(logged()).toContain("is unreachable"), { timeout: 5_000 })
    await runtime.dispose()
    expect(logged()).not.toContain(PASSWORD)
    expect(logged()).toContain("redis://127.0.0.1:9/0?password=***&Auth=***&db=0 is unreachable")
  })

  it("a server that refuses the password, and one that is not there, are named without it", async () => {
    for (const url of [`redis://:wrong-${PASSWORD}@127.0.0.1:${redis.port}`, `redis://user:${PASSWORD}@127.0.0.1:9`]) {
      const runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url }))
      await runtime.runPromise(RateLimitStore)
      await vi.waitFor(() => expect(logged()).toContain("is unreachable"), { timeout: 5_000 })
      await runtime.dispose()
      expect(logged()).not.toContain(PASSWORD)
      errors.mockClear()
    }
  })
})
