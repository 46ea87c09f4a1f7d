import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ManagedRuntime } from "effect"
import {
  defineServe,
  makeRedisRateLimitStore,
  rateLimit,
  RateLimitStore,
  type RateLimitStoreService,
  redisRateLimitStoreLayer,
  type ServeRequest
} from "queryserve"
import { createClient } from "redis"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { eventually } from "../support/eventually.js"
import { type RedisServer, redisUnavailable, startRedis } from "../support/redisServer.js"
import { observedRedis } from "../support/observedRedis.js"

const skipReason = redisUnavailable()
const worker = fileURLToPath(new URL("../support/incrementWorker.ts", import.meta.url))

/** Runs the workers together: each connects, reports ready, then all get "go" at once. */
const incrementFromProcesses = async (url: string, key: string, processes: number, each: number): Promise<Array<number>> => {
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, ["--import", "tsx", worker, url, key, String(each), "60000"], { stdio: ["pipe", "pipe", "inherit"] }))
  try {
    const outputs = children.map((child) => {
      let text = ""
      const ready = new Promise<void>((resolve) =>
        child.stdout.on("data", (chunk: Buffer) => {
          text += chunk.toString()
          if (text.startsWith("ready\n")) resolve()
        }))
      const done = new Promise<string>((resolve, reject) =>
        child.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`worker exited with ${code}`)))))
      return { ready, done }
    })
    await Promise.all(outputs.map((output) => output.ready))
    for (const child of children) child.stdin.write("go\n")
    const texts = await Promise.all(outputs.map((output) => output.done))
    return texts.flatMap((text) => JSON.parse(text.slice("ready\n".length)) as Array<number>)
  } finally {
    for (const child of children) child.kill("SIGKILL")
  }
}

const get = (path: string): ServeRequest => ({ method: "GET", path, headers: {}, remoteAddress: "203.0.113.7" })

describe.skipIf(skipReason !== undefined)("Redis RateLimitStore against a real redis-server", () => {
  let redis: RedisServer
  let client: ReturnType<typeof createClient>
  let store: RateLimitStoreService

  beforeAll(async () => {
    redis = await startRedis()
    client = createClient({ url: redis.url })
    await client.connect()
    store = makeRedisRateLimitStore({ client, prefix: "test:" })
  })

  afterAll(async () => {
    await client?.close()
    await redis?.stop()
  })

  it("counts 1,000 concurrent increments from 2 processes exactly", async () => {
    const counts = await incrementFromProcesses(redis.url, "shared", 2, 500)
    // Every increment saw a distinct count: no two of them read the same value.
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    const workerStore = makeRedisRateLimitStore({ client })
    expect(await workerStore.increment("shared", 60_000)).toBe(1001)
  })

  it("starts the window at count 1, keeps it on later hits, and resets", async () => {
    expect(await store.getTtl("window")).toBe(0)
    expect(await store.increment("window", 60_000)).toBe(1)
    const ttlAtStart = await store.getTtl("window")
    expect(ttlAtStart).toBeGreaterThan(59_000)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(await store.increment("window", 60_000)).toBe(2)
    // The second hit did not restart the window.
    expect(await store.getTtl("window")).toBeLessThan(ttlAtStart)
    await store.reset("window")
    expect(await store.getTtl("window")).toBe(0)
    expect(await store.increment("window", 60_000)).toBe(1)
  })

  it("begins a new window at count 1 once the old one expires", async () => {
    expect(await store.increment("short", 150)).toBe(1)
    expect(await store.increment("short", 150)).toBe(2)
    await eventually(async () => expect(await store.getTtl("short")).toBe(0))
    expect(await store.increment("short", 150)).toBe(1)
  })

  it("gives a key found without expiry a window instead of blocking it forever", async () => {
    await client.set("test:stuck", "5")
    expect(await store.increment("stuck", 60_000)).toBe(6)
    expect(await store.getTtl("stuck")).toBeGreaterThan(0)
  })

  it("loads its script again after the server forgot it (NOSCRIPT)", async () => {
    await client.scriptFlush()
    expect(await store.increment("flushed", 60_000)).toBe(1)
  })
})

describe.skipIf(skipReason !== undefined)("Redis rate-limit layer disposed right after it was built", () => {
  const observed = observedRedis()

  const buildAndDispose = async (url: string): Promise<void> => {
    const runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url }))
    await runtime.runPromise(RateLimitStore)
    await runtime.dispose()
  }

  it("closes its connection every time, though it was still connecting", async () => {
    for (let i = 0; i < 10; i++) await buildAndDispose(observed.server().url)
    // The server notices a closed connection a moment later; a leaked one stays.
    await eventually(async () => expect(await observed.otherClients()).toBe(0), 2000)
  })

  it("does not let a Redis that never answers hold dispose", async () => {
    const before = await observed.otherClients()
    observed.server().pause()
    try {
      const started = Date.now()
      await buildAndDispose(observed.server().url)
      expect(Date.now() - started).toBeLessThan(1500)
    } finally {
      observed.server().resume()
    }
    // Once Redis answers again, the connection it accepted meanwhile must not stay.
    await eventually(async () => expect(await observed.otherClients()).toBe(before), 2000)
  })
})

describe.skipIf(skipReason !== undefined)("rateLimit on the Redis layer when Redis dies", () => {
  let redis: RedisServer
  let runtime: ManagedRuntime.ManagedRuntime<RateLimitStore, never>
  let store: RateLimitStoreService
  const errors = vi.spyOn(console, "error").mockImplementation(() => undefined)

  beforeAll(async () => {
    redis = await startRedis()
    runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url: redis.url, commandTimeoutMs: 300 }))
    store = await runtime.runPromise(RateLimitStore)
    await eventually(() => Promise.resolve(store.getTtl("probe")))
  })

  afterEach(() => errors.mockClear())

  afterAll(async () => {
    await runtime?.dispose()
    await redis?.stop()
    errors.mockRestore()
  })

  const makeApi = (failOpen: boolean) =>
    defineServe({
      queries: { ping: { query: () => "pong", middlewares: [rateLimit({ store, max: 2, windowMs: 60_000, failOpen, keyBy: () => `k${failOpen}` })] } }
    })

  it("limits across requests while Redis is up, fails open or closed while it is down, and recovers", async () => {
    const open = makeApi(true)
    const closed = makeApi(false)
    expect((await closed.handler(get("/api/analytics/ping"))).headers["x-ratelimit-remaining"]).toBe("1")
    expect((await closed.handler(get("/api/analytics/ping"))).headers["x-ratelimit-remaining"]).toBe("0")
    expect((await closed.handler(get("/api/analytics/ping"))).status).toBe(429)
    expect((await open.handler(get("/api/analytics/ping"))).headers["x-ratelimit-remaining"]).toBe("1")

    await redis.kill()

    // Failing open counts on in this process from the count Redis last gave (1): one more passes, uncounted by Redis.
    const failedOpen = await open.handler(get("/api/analytics/ping"))
    expect(failedOpen.status).toBe(200)
    expect(failedOpen.headers["x-ratelimit-limit"]).toBeUndefined()
    const failedClosed = await closed.handler(get("/api/analytics/ping"))
    expect(failedClosed.status).toBe(503)
    expect(JSON.parse(failedClosed.body!).error.type).toBe("SERVICE_UNAVAILABLE")
    // Further failures of the same outage are not logged again; the open limiter's window is used up.
    expect((await open.handler(get("/api/analytics/ping"))).status).toBe(429)
    await closed.handler(get("/api/analytics/ping"))
    const storeFailureLogs = errors.mock.calls.filter(([message]) => String(message).includes("rate-limit store failed"))
    expect(storeFailureLogs).toHaveLength(2)

    await redis.restart()
    // A fresh server has no counts: limiting resumes from 1 once the client has reconnected.
    const recovered = await eventually(async () => {
      const response = await closed.handler(get("/api/analytics/ping"))
      if (response.status !== 200) throw new Error(`still ${response.status}`)
      return response
    })
    expect(recovered.headers["x-ratelimit-remaining"]).toBe("1")
    await closed.handler(get("/api/analytics/ping"))
    expect((await closed.handler(get("/api/analytics/ping"))).status).toBe(429)
  })
})
