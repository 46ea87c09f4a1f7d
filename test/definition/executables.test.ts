import { Context, Effect, Layer, Schema } from "effect"
import { defineServe, QueryFailure, type ServeContext } from "queryserve"
import { describe, expect, it } from "vitest"

class Greeter extends Context.Tag("test/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}

const call = async (api: ReturnType<typeof defineServe>, key: string, query: Record<string, string> = {}) => {
  const response = await api.handler({ method: "GET", path: `/api/analytics/${key}`, query })
  return { status: response.status, body: response.body === null ? null : JSON.parse(response.body) }
}

describe("executable shapes", () => {
  const input = Schema.Struct({ name: Schema.String })

  it("runs the resolver form ({ input, ctx }), the legacy form (input, ctx) and { run }", async () => {
    const api = defineServe({
      queries: {
        resolver: { inputSchema: input, query: ({ input, ctx }: { input: { name: string }; ctx: ServeContext }) => `${input.name}@${ctx.endpoint.key}` },
        legacy: { inputSchema: input, query: (input: { name: string }, ctx: ServeContext) => `${input.name}@${ctx.endpoint.key}` },
        runnable: { inputSchema: input, query: { run: ({ input }: { input: { name: string } }) => `${input.name}@run` } },
        runnableLegacy: {
          inputSchema: input,
          query: {
            prefix: "legacy-run",
            run(this: { prefix: string }, input: { name: string }, _ctx: ServeContext) {
              return `${input.name}@${this.prefix}`
            }
          }
        }
      }
    })
    expect(await call(api, "resolver", { name: "a" })).toEqual({ status: 200, body: "a@resolver" })
    expect(await call(api, "legacy", { name: "b" })).toEqual({ status: 200, body: "b@legacy" })
    expect(await call(api, "runnable", { name: "c" })).toEqual({ status: 200, body: "c@run" })
    expect(await call(api, "runnableLegacy", { name: "d" })).toEqual({ status: 200, body: "d@legacy-run" })
  })

  it("wraps a bare function entry in a default configuration", async () => {
    const api = defineServe({ queries: { bare: ({ input }: { input: unknown }) => ({ echoed: input }) } })
    expect(await call(api, "bare", { q: "1" })).toEqual({ status: 200, body: { echoed: { q: "1" } } })
    expect(api.describe()[0]).toMatchObject({ key: "bare", method: "GET", name: "bare", requiresAuth: false })
  })

  it("awaits promises and answers 204 for an undefined result", async () => {
    const api = defineServe({ queries: { later: async () => [1, 2], nothing: async () => undefined } })
    expect(await call(api, "later")).toEqual({ status: 200, body: [1, 2] })
    expect(await call(api, "nothing")).toEqual({ status: 204, body: null })
  })

  it("runs a returned Effect with services from config.layer", async () => {
    const api = defineServe({
      layer: Layer.succeed(Greeter, { greet: (name) => `hello ${name}` }),
      queries: {
        greet: {
          inputSchema: input,
          query: ({ input }: { input: { name: string } }) => Effect.map(Greeter, (greeter) => greeter.greet(input.name))
        },
        failing: () => Effect.fail(new QueryFailure({ message: "warehouse query failed", queryId: "q-17" }))
      }
    })
    expect(await call(api, "greet", { name: "ada" })).toEqual({ status: 200, body: "hello ada" })
    expect(await call(api, "failing")).toEqual({
      status: 500,
      body: { error: { type: "QUERY_FAILURE", message: "warehouse query failed", details: { queryId: "q-17" } } }
    })
  })

  it("waits for an async config.layer before the first request", async () => {
    const api = defineServe({
      layer: Layer.effect(Greeter, Effect.delay(Effect.succeed({ greet: (name: string) => `hi ${name}` }), "20 millis")),
      queries: { greet: () => Effect.map(Greeter, (greeter) => greeter.greet("bob")) }
    })
    expect(await call(api, "greet")).toEqual({ status: 200, body: "hi bob" })
    await api.dispose()
  })

  it("ctx carries input, auth, tenantId, request, requestId, locals, signal and the context factory's values", async () => {
    let seen: ServeContext<unknown, { id: string; tenant: string }, { db: string; who: string | undefined }> | undefined
    const api = defineServe({
      auth: () => ({ id: "u1", tenant: "acme" }),
      tenant: { extract: (auth) => (auth as { tenant?: string } | null)?.tenant },
      context: ({ auth }) => ({ db: "warehouse", who: (auth as { id?: string } | null)?.id }),
      middlewares: [(ctx, next) => {
        ctx.locals.touched = true
        return next()
      }],
      queries: {
        inspect: (args: { ctx: typeof seen & {} }) => {
          seen = args.ctx
          return null
        }
      }
    })
    await api.handler({ method: "GET", path: "/api/analytics/inspect", query: { a: "1" }, headers: { "x-request-id": "r-9" } })
    expect(seen).toBeDefined()
    const ctx = seen!
    expect(ctx.input).toEqual({ a: "1" })
    expect(ctx.auth).toEqual({ id: "u1", tenant: "acme" })
    expect(ctx.tenantId).toBe("acme")
    expect(ctx.request.path).toBe("/api/analytics/inspect")
    expect(ctx.requestId).toBe("r-9")
    expect(ctx.locals).toEqual({ touched: true })
    expect(ctx.signal).toBeInstanceOf(AbortSignal)
    expect(ctx.db).toBe("warehouse")
    expect(ctx.who).toBe("u1")
  })

  it("a static context object is merged, but never overrides built-in ctx fields", async () => {
    const api = defineServe({
      context: { region: "eu", input: "spoofed", auth: { id: "spoofed" } },
      queries: { q: ({ input, ctx }: { input: unknown; ctx: ServeContext & { region?: string } }) => ({ input, auth: ctx.auth, region: ctx.region }) }
    })
    expect(await call(api, "q", { x: "1" })).toEqual({ status: 200, body: { input: { x: "1" }, auth: null, region: "eu" } })
  })
})
