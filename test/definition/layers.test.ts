import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  apiKeyAuth,
  Authenticator,
  AuthService,
  defaultServicesLayer,
  defineServe,
  memoryRateLimitStoreLayer,
  Pipeline,
  pipelineLayer,
  QueryLogger,
  rateLimit,
  RateLimitStore,
  type RateLimitStoreService,
  TenantIsolation,
  TenantService
} from "queryserve"

const config = {
  auth: () => null,
  queries: { whoami: ({ ctx }: { ctx: { auth: unknown } }) => ({ caller: ctx.auth }) }
}

/** A test double for the authentication stage: everyone is the same fixed caller. */
const FixedCaller = Layer.succeed(AuthService, {
  authenticate: () => ({ id: "test-user", roles: ["admin"] })
})

describe("stage services are Effect services", () => {
  it.effect("a test Layer replaces the AuthService of the pipeline", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline
      const response = yield* Effect.promise(async () => pipeline.handle({ method: "GET", path: "/api/analytics/whoami" }))
      expect(response.status).toBe(200)
      expect(JSON.parse(response.body!)).toEqual({ caller: { id: "test-user", roles: ["admin"] } })
    }).pipe(Effect.provide(pipelineLayer(config).pipe(Layer.provide(Layer.mergeAll(FixedCaller, TenantService.layer, QueryLogger.layer, memoryRateLimitStoreLayer())))))
  )

  it.effect("with the default services the same pipeline refuses the anonymous caller", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline
      const logger = yield* QueryLogger
      const statuses: Array<number | undefined> = []
      logger.on((event) => statuses.push(event.responseStatus))
      const response = yield* Effect.promise(async () => pipeline.handle({ method: "GET", path: "/api/analytics/whoami" }))
      expect(response.status).toBe(401)
      expect(statuses).toEqual([undefined, 401])
    }).pipe(Effect.provide(pipelineLayer(config).pipe(Layer.provideMerge(defaultServicesLayer))))
  )
})

describe("config.layer", () => {
  it("replaces a default stage service, while the builder's logger still reports", async () => {
    const api = defineServe({ ...config, layer: FixedCaller })
    const statuses: Array<number | undefined> = []
    api.queryLogger.on((event) => statuses.push(event.responseStatus))
    const response = await api.handler({ method: "GET", path: "/api/analytics/whoami" })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body!)).toEqual({ caller: { id: "test-user", roles: ["admin"] } })
    expect(statuses).toEqual([undefined, 200])
    expect((await defineServe(config).handler({ method: "GET", path: "/api/analytics/whoami" })).status).toBe(401)
  })
})

/** A RateLimitStore that counts in a Map and remembers every key it was asked to count. */
const recordingStore = () => {
  const counts = new Map<string, number>()
  const store: RateLimitStoreService = {
    increment: (key) => {
      const count = (counts.get(key) ?? 0) + 1
      counts.set(key, count)
      return count
    },
    getTtl: () => 30_000,
    reset: (key) => void counts.delete(key)
  }
  return { store, counts }
}

describe("the services a config.layer gives are the ones the stages use", () => {
  it("rateLimit() without a store, and authFailureLimit, count in the layer's RateLimitStore", async () => {
    const { store, counts } = recordingStore()
    const api = defineServe({
      queries: { ping: () => ({ ok: true }) },
      auth: apiKeyAuth({ validate: (key) => (key === "good" ? { id: "u" } : null) }),
      middlewares: [rateLimit({ max: 2, windowMs: 60_000 })],
      authFailureLimit: { max: 5, windowMs: 60_000 },
      layer: Layer.succeed(RateLimitStore, store)
    })
    const get = (key: string) =>
      api.handler({ method: "GET", path: "/api/analytics/ping", headers: { "x-api-key": key }, remoteAddress: "10.0.0.7" })
    expect((await get("wrong")).status).toBe(401)
    expect([...counts.entries()].filter(([key]) => key.startsWith("af:"))).toEqual([["af:10.0.0.7", 1]])
    expect((await get("good")).status).toBe(200)
    expect((await get("good")).status).toBe(200)
    expect((await get("good")).status).toBe(429)
    const limiterKeys = [...counts.keys()].filter((key) => !key.startsWith("af:"))
    expect(limiterKeys).toHaveLength(1)
    expect(limiterKeys[0]).toMatch(/^rl\d+:10\.0\.0\.7$/)
    expect(counts.get(limiterKeys[0]!)).toBe(3)
  })

  it("a store the layer's store already counts up refuses at once: the count is the store's", async () => {
    const api = defineServe({
      queries: { ping: () => ({ ok: true }) },
      middlewares: [rateLimit({ max: 3 })],
      layer: Layer.succeed(RateLimitStore, { increment: () => 100, getTtl: () => 5_000, reset: () => undefined })
    })
    const response = await api.handler({ method: "GET", path: "/api/analytics/ping" })
    expect(response.status).toBe(429)
    expect(response.headers["retry-after"]).toBe("5")
  })

  it("two APIs without a RateLimitStore in their layer count apart", async () => {
    const limited = rateLimit({ max: 1 })
    const one = defineServe({ queries: { ping: () => ({ ok: true }) }, middlewares: [limited] })
    const two = defineServe({ queries: { ping: () => ({ ok: true }) }, middlewares: [limited] })
    const ping = (api: typeof one) => api.handler({ method: "GET", path: "/api/analytics/ping", remoteAddress: "10.0.0.8" })
    expect((await ping(one)).status).toBe(200)
    expect((await ping(two)).status).toBe(200)
    expect((await ping(one)).status).toBe(429)
  })

  it("a QueryLogger in config.layer receives the pipeline's events", async () => {
    const logger = Effect.runSync(Effect.provide(QueryLogger, QueryLogger.layer))
    const seen: Array<string> = []
    logger.on((event) => seen.push(`${event.status} ${event.endpointKey}`))
    const api = defineServe({ queries: { ping: () => ({ ok: true }) }, layer: Layer.succeed(QueryLogger, logger) })
    expect((await api.handler({ method: "GET", path: "/api/analytics/ping" })).status).toBe(200)
    expect(seen).toEqual(["started ping", "completed ping"])
  })

  it("AuthService and TenantService are the exported Tags; the old names are deprecated aliases of them", () => {
    expect(AuthService.key).toBe("queryserve/AuthService")
    expect(TenantService.key).toBe("queryserve/TenantService")
    expect(Authenticator).toBe(AuthService)
    expect(TenantIsolation).toBe(TenantService)
  })
})
