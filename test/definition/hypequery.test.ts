/**
 * Code written for @hypequery/serve, as its documentation shows it, run unchanged on queryserve:
 * `api.route('/<key>', api.queries.<key>)` to expose a query, queries that take no input, and a
 * Node listener that callers await (the last is in test/adapters/handlers.test.ts).
 */
import { Schema } from "effect"
import { defineServe, initServe } from "queryserve"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { bodyOf, get, post } from "../support/requests.js"

describe("api.route('/<key>', api.queries.<key>)", () => {
  const { query, define } = initServe({})

  it("at the query's own path is accepted as a no-op: no duplicate route, one operation in the document", async () => {
    const api = define({
      queries: {
        weeklyRevenue: query.input(z.object({ startDate: z.string() })).query(({ input }) => ({ since: input.startDate })),
        export: query.method("POST").query(() => "done")
      }
    })
    api.route("/weeklyRevenue", api.queries.weeklyRevenue).route("/export", api.queries.export).route("weeklyRevenue", "weeklyRevenue")
    const answer = await api.handler(get("/api/analytics/weeklyRevenue", { startDate: "2026-01-01" }))
    expect(answer.status).toBe(200)
    expect(bodyOf(answer)).toEqual({ since: "2026-01-01" })
    expect((await api.handler(post("/api/analytics/export", ""))).status).toBe(200)
    expect(api.describe().map((route) => `${route.method} ${route.path}`)).toEqual([
      "GET /api/analytics/weeklyRevenue",
      "POST /api/analytics/export"
    ])
  })

  it("adding the same extra route twice is a no-op too; another query's path is refused at once and changes nothing", async () => {
    const api = defineServe({ queries: { a: () => "a", b: () => "b" } })
    api.route("/weekly", api.queries.a).route("/weekly", api.queries.a)
    expect(api.describe().map((route) => route.path)).toEqual(["/api/analytics/a", "/api/analytics/b", "/api/analytics/weekly"])
    expect(() => api.route("/b", api.queries.a)).toThrow(/Duplicate route GET \/api\/analytics\/b/)
    expect(bodyOf(await api.handler(get("/api/analytics/b")))).toBe("b")
    expect(bodyOf(await api.handler(get("/api/analytics/weekly")))).toBe("a")
    expect(api.describe()).toHaveLength(3)
  })
})

describe("a query whose input schema is void or undefined", () => {
  const schemas = {
    "Effect Schema.Void": Schema.Void,
    "Effect Schema.Undefined": Schema.Undefined,
    "zod z.void()": z.void(),
    "zod z.undefined()": z.undefined()
  }

  for (const [name, schema] of Object.entries(schemas)) {
    it(`${name}: a GET without a query string and a POST without a body answer 200`, async () => {
      const seen: Array<unknown> = []
      const api = defineServe({
        queries: {
          ping: { inputSchema: schema, query: ({ input }: { input: unknown }) => (seen.push(input), "pong") },
          poke: { method: "POST", inputSchema: schema, query: () => "poked" }
        }
      })
      const answer = await api.handler(get("/api/analytics/ping"))
      expect(answer.status).toBe(200)
      expect(bodyOf(answer)).toBe("pong")
      expect((await api.handler(post("/api/analytics/poke", ""))).status).toBe(200)
      expect(await api.execute("ping")).toBe("pong")
      // Nothing sent, nothing seen: Schema.Void, which takes anything (`{}` too), is known by its AST.
      expect(seen).toEqual([undefined, undefined])
      if (schema !== Schema.Void) {
        const refused = await api.handler(get("/api/analytics/ping", { unexpected: "1" }))
        expect(refused.status).toBe(400)
      }
    })
  }

  it("types the handler's input as the schema's, and `execute` needs no input", () => {
    const { query } = initServe({})
    const ping = query.input(z.void()).query(({ input }) => {
      expectTypeOf(input).toEqualTypeOf<void>()
      return "pong"
    })
    const api = defineServe({ queries: { ping } })
    expectTypeOf(api.execute("ping")).resolves.toEqualTypeOf<string>()
  })
})
