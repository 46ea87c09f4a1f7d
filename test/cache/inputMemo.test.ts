import { Schema } from "effect"
import { apiKeyAuth, defineServe, type ServeAuthContext, type ServeMiddleware, type ServeQueryEvent, type ServeRequest } from "queryserve"
import { describe, expect, it } from "vitest"
import { get } from "./support/requests.js"

/**
 * A cached endpoint remembers the inputs it validated by their raw text (query parameters, or body
 * and content type): a repeated request skips validation. These tests count the validator's runs
 * with a filter that records every value it is asked about.
 */
const checked = () => {
  const seen: Array<string> = []
  const Day = Schema.String.pipe(Schema.filter((text) => {
    seen.push(text)
    return /^\d{4}-\d{2}-\d{2}$/.test(text)
  }))
  return { seen, Input: Schema.Struct({ from: Day, to: Day }) }
}

const CALLERS: Readonly<Record<string, ServeAuthContext>> = {
  "key-acme": { tenantId: "acme", roles: ["analyst"] },
  "key-globex": { tenantId: "globex", roles: ["analyst"] },
  "key-admin": { roles: ["admin"] },
  "key-admin-2": { roles: ["admin"], name: "another admin" }
}

const asCaller = (request: ServeRequest, apiKey: string): ServeRequest => ({ ...request, headers: { ...request.headers, "x-api-key": apiKey } })

const RANGE = { from: "2025-01-01", to: "2025-03-31" }

describe("result cache: inputs remembered by their raw text", () => {
  it("validates a repeated raw input once; another spelling of the same input is validated, then shares the entry", async () => {
    const { seen, Input } = checked()
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: { range: { cacheTtlMs: 60_000, inputSchema: Input, query: ({ input }: { input: { from: string; to: string } }) => ({ ...input, run: ++runs }) } }
    })
    const first = await api.handler(get("range", RANGE))
    const again = await api.handler(get("range", RANGE))
    expect([first.status, first.headers["x-cache"], again.headers["x-cache"]]).toEqual([200, "MISS", "HIT"])
    expect(again.body).toBe(first.body)
    expect(seen).toEqual(["2025-01-01", "2025-03-31"])
    // Other key order: another raw text, validated once, and the same cache entry.
    const reordered = await api.handler(get("range", { to: RANGE.to, from: RANGE.from }))
    expect([reordered.headers["x-cache"], reordered.body]).toEqual(["HIT", first.body])
    expect(seen).toHaveLength(4)
    await api.handler(get("range", { to: RANGE.to, from: RANGE.from }))
    expect(seen).toHaveLength(4)
    expect(runs).toBe(1)
  })

  it("validates an input that failed every time it comes: failures are not remembered", async () => {
    const { seen, Input } = checked()
    const api = defineServe({ resultCache: true, queries: { range: { cacheTtlMs: 60_000, inputSchema: Input, query: () => [] } } })
    for (let i = 1; i <= 3; i++) {
      const refused = await api.handler(get("range", { from: "2025-01-01", to: "March" }))
      expect(refused.status).toBe(400)
      expect(refused.headers["x-cache"]).toBeUndefined()
      expect(seen).toHaveLength(2 * i)
    }
  })

  it("never serves one tenant's or one caller's entry to another for the same raw input", async () => {
    const { seen, Input } = checked()
    const runs: Array<string> = []
    const api = defineServe({
      resultCache: true,
      auth: apiKeyAuth({ header: "x-api-key", keys: CALLERS }),
      tenant: { extract: (auth) => (typeof auth?.tenantId === "string" ? auth.tenantId : null), required: false },
      queries: {
        range: {
          cacheTtlMs: 60_000,
          inputSchema: Input,
          query: ({ input, ctx }: { input: { from: string }; ctx: { tenantId: string | null; auth: ServeAuthContext | null } }) => {
            const owner = ctx.tenantId ?? String(ctx.auth?.name ?? "admin")
            runs.push(owner)
            return { owner, from: input.from }
          }
        }
      }
    })
    const owners = async (): Promise<Array<unknown>> => {
      const answers = []
      for (const key of ["key-acme", "key-globex", "key-admin", "key-admin-2"]) answers.push(await api.handler(asCaller(get("range", RANGE), key)))
      return answers.map((answer) => [answer.headers["x-cache"], JSON.parse(answer.body!).owner])
    }
    expect(await owners()).toEqual([["MISS", "acme"], ["MISS", "globex"], ["MISS", "admin"], ["MISS", "another admin"]])
    // The raw text was validated once for all four; each scope still has an entry of its own.
    expect(seen).toHaveLength(2)
    expect(await owners()).toEqual([["HIT", "acme"], ["HIT", "globex"], ["HIT", "admin"], ["HIT", "another admin"]])
    expect(runs).toEqual(["acme", "globex", "admin", "another admin"])
    expect(seen).toHaveLength(2)
    // A caller refused before validation is still refused.
    expect((await api.handler(asCaller(get("range", RANGE), "key-unknown"))).status).toBe(401)
  })

  it("gives every request a copy of its own: a handler that changes its input changes nothing for later requests", async () => {
    const seenByHandler: Array<unknown> = []
    const events: Array<ServeQueryEvent> = []
    const api = defineServe({
      resultCache: true,
      queryLogging: (event) => void events.push(event),
      queries: {
        tags: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ tag: Schema.Array(Schema.String), limit: Schema.NumberFromString }),
          query: ({ input }: { input: { tag: Array<string>; limit: number } }) => {
            seenByHandler.push(structuredClone(input))
            input.tag.push("added by the handler")
            ;(input as { limit: number }).limit = 0
            return input.tag.length
          }
        }
      }
    })
    const request = get("tags", { tag: ["a", "b"], limit: "5" })
    await api.handler(request)
    await api.cache.invalidate()
    await api.handler(request)
    const hit = await api.handler(request)
    expect(hit.headers["x-cache"]).toBe("HIT")
    expect(seenByHandler).toEqual([{ tag: ["a", "b"], limit: 5 }, { tag: ["a", "b"], limit: 5 }])
    // The hit's event carries the input as validated.
    const completed = events.filter((event) => event.status === "completed")
    expect(completed.map((event) => event.cacheHit)).toEqual([false, false, true])
    expect(completed[2]!.input).toEqual({ tag: ["a", "b"], limit: 5 })
  })

  it("gives every request a copy of its own of a flat input too (copied with a spread), with the prototype of a plain object", async () => {
    const seenByHandler: Array<unknown> = []
    const api = defineServe({
      resultCache: true,
      queries: {
        top: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ region: Schema.String, limit: Schema.NumberFromString }),
          query: ({ input }: { input: { region: string; limit: number } }) => {
            seenByHandler.push({ ...input, plain: Object.getPrototypeOf(input) === Object.prototype })
            ;(input as { limit: number }).limit = 0
            ;(input as { extra?: boolean }).extra = true
            return input.region
          }
        }
      }
    })
    const request = get("top", { region: "eu", limit: "5" })
    await api.handler(request)
    await api.cache.invalidate()
    // Remembered now: these two runs get copies, each unchanged by the run before.
    await api.handler(request)
    await api.cache.invalidate()
    await api.handler(request)
    expect(seenByHandler).toEqual(Array.from({ length: 3 }, () => ({ region: "eu", limit: 5, plain: true })))
  })

  it("keys on what middlewares leave in ctx.input, even when they change it in place", async () => {
    const seenByMiddleware: Array<number> = []
    const clamp: ServeMiddleware = (ctx, next) => {
      const input = ctx.input as { limit: number }
      seenByMiddleware.push(input.limit)
      input.limit = Math.min(input.limit, 5)
      return next()
    }
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: {
        top: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ limit: Schema.NumberFromString }),
          middlewares: [clamp],
          query: ({ input }: { input: { limit: number } }) => ({ limit: input.limit, run: ++runs })
        }
      }
    })
    const answers = []
    for (const limit of ["50", "50", "5", "3"]) answers.push(await api.handler(get("top", { limit })))
    expect(answers.map((answer) => [answer.headers["x-cache"], JSON.parse(answer.body!)])).toEqual([
      ["MISS", { limit: 5, run: 1 }],
      ["HIT", { limit: 5, run: 1 }],
      ["HIT", { limit: 5, run: 1 }],
      ["MISS", { limit: 3, run: 2 }]
    ])
    // The remembered input was not changed by the middleware's edit of its own copy.
    expect(seenByMiddleware).toEqual([50, 50, 5, 3])
  })

  it("tells apart raw texts that only a naive join would merge, and a body by its content type", async () => {
    const api = defineServe({
      resultCache: true,
      queries: {
        pair: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ a: Schema.String, b: Schema.optional(Schema.String) }),
          query: ({ input }: { input: { a: string; b?: string } }) => input
        }
      }
    })
    api.route("/pair", "pair", { method: "POST" })
    const joined = await api.handler(get("pair", { a: "1&b=2" }))
    const apart = await api.handler(get("pair", { a: "1", b: "2" }))
    expect(JSON.parse(joined.body!)).toEqual({ a: "1&b=2" })
    expect(JSON.parse(apart.body!)).toEqual({ a: "1", b: "2" })
    const body = (contentType: string): ServeRequest => ({ method: "POST", path: "/api/analytics/pair", headers: { "content-type": contentType }, body: "a=form" })
    const form = await api.handler(body("application/x-www-form-urlencoded"))
    expect([form.status, JSON.parse(form.body!)]).toEqual([200, { a: "form" }])
    // The same text sent as JSON is not JSON: it is refused, not answered with the form's input.
    expect((await api.handler(body("application/json"))).status).toBe(400)
  })

  it("tells a body without a Content-Type (read as JSON) from the same body with an empty one (refused)", async () => {
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: {
        rows: {
          method: "POST",
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ region: Schema.String }),
          query: ({ input }: { input: { region: string } }) => [{ region: input.region, run: ++runs }]
        }
      }
    })
    const post = (headers: Record<string, string>): ServeRequest => ({ method: "POST", path: "/api/analytics/rows", headers, body: '{"region":"eu"}' })
    expect((await api.handler(post({}))).status).toBe(200)
    expect((await api.handler(post({}))).headers["x-cache"]).toBe("HIT")
    // Remembered without a Content-Type, the text must not vouch for a request with an empty one.
    const empty = await api.handler(post({ "content-type": "" }))
    expect([empty.status, JSON.parse(empty.body!).error.type]).toEqual([400, "VALIDATION_ERROR"])
    expect(runs).toBe(1)
  })

  it("over node:http, remembers a query by the text the request carried, never confused with a text built from parameters", async () => {
    const { seen, Input } = checked()
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: {
        range: {
          cacheTtlMs: 60_000,
          inputSchema: Input,
          query: ({ input, ctx }: { input: { from: string; to: string }; ctx: { request: ServeRequest } }) => ({
            ...input,
            // The parsed parameters stay readable, parsed when first read.
            params: ctx.request.query,
            run: ++runs
          })
        }
      }
    })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const base = `http://127.0.0.1:${server.port}/api/analytics/range`
      const fetchJson = async (query: string) => {
        const response = await fetch(`${base}?${query}`)
        return { status: response.status, cache: response.headers.get("x-cache"), body: await response.json() as unknown }
      }
      const first = await fetchJson("from=2025-01-01&to=2025-03-31")
      expect(first).toEqual({ status: 200, cache: "MISS", body: { ...RANGE, params: RANGE, run: 1 } })
      expect(await fetchJson("from=2025-01-01&to=2025-03-31")).toEqual({ ...first, cache: "HIT" })
      expect(seen).toHaveLength(2)
      // Another spelling (order, percent-encoding): validated once, then the same entry.
      expect((await fetchJson("to=2025-03-31&from=2025%2D01%2D01")).cache).toBe("HIT")
      expect(await fetchJson("to=2025-03-31&from=2025%2D01%2D01")).toEqual({ ...first, cache: "HIT" })
      expect(seen).toHaveLength(4)
      // In process, the parameters' built text ("q4:from=10:2025-01-01..." and so on) is remembered apart:
      // a request target carrying that very text is a different input, and is refused.
      expect((await api.handler(get("range", RANGE))).headers["x-cache"]).toBe("HIT")
      const lookalike = await fetchJson("q4:from=10:2025-01-012:to=10:2025-03-31")
      expect(lookalike.status).toBe(400)
      expect(runs).toBe(1)
    } finally {
      await server.stop()
    }
  })

  it("remembers at most 1,000 inputs per endpoint, forgetting the oldest first", async () => {
    const seen: Array<string> = []
    const api = defineServe({
      resultCache: true,
      queries: {
        n: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ n: Schema.String.pipe(Schema.filter((text) => {
            seen.push(text)
            return true
          })) }),
          query: ({ input }: { input: { n: string } }) => input.n
        }
      }
    })
    for (let i = 0; i <= 1_000; i++) await api.handler(get("n", { n: String(i) }))
    expect(seen).toHaveLength(1_001)
    // 1 to 1,000 are remembered; 0 was pushed out by the 1,001st and is validated again.
    await api.handler(get("n", { n: "1000" }))
    await api.handler(get("n", { n: "1" }))
    expect(seen).toHaveLength(1_001)
    const forgotten = await api.handler(get("n", { n: "0" }))
    expect([forgotten.headers["x-cache"], forgotten.body]).toEqual(["HIT", '"0"'])
    expect(seen.slice(1_001)).toEqual(["0"])
  })
})
