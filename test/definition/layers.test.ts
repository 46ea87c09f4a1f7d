import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Authenticator, defineServe, pipelineLayer, Pipeline, QueryLogger, TenantIsolation, defaultServicesLayer } from "queryserve"

const config = {
  auth: () => null,
  queries: { whoami: ({ ctx }: { ctx: { auth: unknown } }) => ({ caller: ctx.auth }) }
}

/** A test double for the authentication stage: everyone is the same fixed caller. */
const FixedCaller = Layer.succeed(Authenticator, {
  authenticate: () => ({ id: "test-user", roles: ["admin"] })
})

describe("stage services are Effect services", () => {
  it.effect("a test Layer replaces the Authenticator of the pipeline", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline
      const response = yield* Effect.promise(async () => pipeline.handle({ method: "GET", path: "/api/analytics/whoami" }))
      expect(response.status).toBe(200)
      expect(JSON.parse(response.body!)).toEqual({ caller: { id: "test-user", roles: ["admin"] } })
    }).pipe(Effect.provide(pipelineLayer(config).pipe(Layer.provide(Layer.mergeAll(FixedCaller, TenantIsolation.layer, QueryLogger.layer)))))
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
