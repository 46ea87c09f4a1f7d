import { Schema } from "effect"
import { defineServe, initServe, type ServeMiddleware } from "queryserve"
import { describe, expect, expectTypeOf, it } from "vitest"

describe("initServe procedure builder", () => {
  const { query, queries, define } = initServe({ context: () => ({ multiplier: 3 }) })

  it("every method returns a new builder (immutable chaining)", () => {
    const base = query.tag("a")
    const derived = base.tag("b").requireRole("admin")
    expect(base.query(() => 1).tags).toEqual(["a"])
    expect(base.query(() => 1).requiredRoles).toBeUndefined()
    expect(derived.query(() => 1).tags).toEqual(["a", "b"])
  })

  it("sets every field of the query definition", () => {
    const middleware: ServeMiddleware = (_ctx, next) => next()
    const strategy = () => ({ id: "x" })
    const tenant = { extract: () => "t1" }
    const definition = query
      .input(Schema.Struct({ n: Schema.Number }))
      .output(Schema.Number)
      .describe("Multiplies n")
      .name("Times")
      .summary("n × multiplier")
      .tag("math")
      .tags(["demo", "math"])
      .method("POST")
      .cache(5_000)
      .auth(strategy)
      .requireScope("read", "write")
      .requireRole("analyst")
      .tenant(tenant)
      .custom({ owner: "a" })
      .custom({ tier: 1 })
      .use(middleware)
      .query(({ input, ctx }) => input.n * ctx.multiplier)
    expect(definition).toMatchObject({
      description: "Multiplies n",
      name: "Times",
      summary: "n × multiplier",
      tags: ["math", "demo"],
      method: "POST",
      cacheTtlMs: 5_000,
      auth: strategy,
      requiresAuth: true,
      requiredScopes: ["read", "write"],
      requiredRoles: ["analyst"],
      tenant,
      custom: { owner: "a", tier: 1 },
      middlewares: [middleware]
    })
    expect(Schema.isSchema(definition.inputSchema)).toBe(true)
    expect(Schema.isSchema(definition.outputSchema)).toBe(true)
  })

  it(".requireAuth() demands credentials and .public() skips global strategies", async () => {
    const api = defineServe({
      auth: () => null,
      queries: {
        open: query.public().query(() => "open"),
        closed: query.query(() => "closed"),
        explicit: query.auth(null).requireAuth().query(() => "explicit")
      }
    })
    expect((await api.handler({ method: "GET", path: "/api/analytics/open" })).status).toBe(200)
    expect((await api.handler({ method: "GET", path: "/api/analytics/closed" })).status).toBe(401)
    expect((await api.handler({ method: "GET", path: "/api/analytics/explicit" })).status).toBe(401)
  })

  it(".auth(strategy) overrides per endpoint; .auth(null) makes it public", async () => {
    const api = defineServe({
      auth: () => null,
      queries: {
        own: query.auth(() => ({ id: "own" })).query(({ ctx }) => ctx.auth?.id),
        none: query.auth(null).query(({ ctx }) => ctx.auth)
      }
    })
    expect((await api.handler({ method: "GET", path: "/api/analytics/own" })).body).toBe('"own"')
    const none = await api.handler({ method: "GET", path: "/api/analytics/none" })
    expect(none.status).toBe(200)
    expect(none.body).toBe("null")
  })

  it("define() builds a ServeBuilder with the initServe options and typed ctx", async () => {
    const api = define({
      queries: queries({
        times: query.input(Schema.Struct({ n: Schema.NumberFromString })).query(({ input, ctx }) => input.n * ctx.multiplier)
      })
    })
    const response = await api.handler({ method: "GET", path: "/api/analytics/times", query: { n: "7" } })
    expect(response.body).toBe("21")
    const result = await api.execute("times", { input: { n: "2" } })
    expect(result).toBe(6)
    expectTypeOf(result).toEqualTypeOf<number>()
  })

  it("infers input from the schema and output from the output schema or the handler", async () => {
    const typed = query
      .input(Schema.Struct({ from: Schema.String, limit: Schema.NumberFromString }))
      .query(async ({ input }) => ({ from: input.from, limit: input.limit }))
    const shaped = query.output(Schema.Struct({ at: Schema.DateFromString })).query(() => ({ at: new Date(0) }))
    const api = defineServe({ queries: { typed, shaped } })
    expectTypeOf(api.execute<"typed">).parameter(1).toEqualTypeOf<
      { readonly input: { readonly from: string; readonly limit: string }; readonly context?: Readonly<Record<string, unknown>>; readonly request?: Partial<import("queryserve").ServeRequest>; readonly trustedAuth?: import("queryserve").ServeAuthContext }
    >()
    const typedResult = await api.execute("typed", { input: { from: "2025-01-01", limit: "5" } })
    expect(typedResult).toEqual({ from: "2025-01-01", limit: 5 })
    expectTypeOf(typedResult).toEqualTypeOf<{ from: string; limit: number }>()
    // The wire type of an Effect Schema output is its encoded side.
    const shapedResult = await api.execute("shaped")
    expect(shapedResult).toEqual({ at: "1970-01-01T00:00:00.000Z" })
    expectTypeOf(shapedResult).toEqualTypeOf<{ readonly at: string }>()
  })
})
