import { Redacted, Schema } from "effect"
import fc from "fast-check"
import {
  defineServe,
  makeTestResultCacheStore,
  rateLimit,
  type ServeAuthContext,
  type ServeContext,
  ServeHttpError,
  type ServeMiddleware,
  type ServeQueryEvent,
  testResultCacheStore
} from "queryserve"
import { afterEach, describe, expect, it, vi } from "vitest"
import { writtenLogLines } from "../support/logLines.js"
import { counted, get, post } from "./support/requests.js"

const Input = Schema.Struct({ region: Schema.String, limit: Schema.optional(Schema.NumberFromString) })

describe("result cache: hits and misses", () => {
  it("answers a repeated request from the cache: MISS, then HIT with the same body, the handler run once", async () => {
    const { runs, query } = counted()
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, inputSchema: Input, query } } })
    const first = await api.handler(get("rows", { region: "eu" }))
    const second = await api.handler(get("rows", { region: "eu" }))
    expect(first.headers["x-cache"]).toBe("MISS")
    expect(second.headers["x-cache"]).toBe("HIT")
    expect(second.body).toBe(first.body)
    expect(second.headers.etag).toBe(first.headers.etag)
    expect(runs.count).toBe(1)
    // Another input is another entry.
    const other = await api.handler(get("rows", { region: "us" }))
    expect(other.headers["x-cache"]).toBe("MISS")
    expect(JSON.parse(other.body!)).toEqual([{ region: "us", limit: 10, run: 2 }])
    expect(await api.cache.stats()).toMatchObject({ hits: 1, misses: 2, entries: 2 })
  })

  it("keys on the validated input: key order, coercion and the route (GET query or POST body) do not matter", async () => {
    const { runs, query } = counted()
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, inputSchema: Input, query } } })
    api.route("/rows", "rows", { method: "POST" })
    const answers = [
      await api.handler({ ...get("rows"), query: { region: "eu", limit: "5" } }),
      await api.handler({ ...get("rows"), query: { limit: "5", region: "eu" } }),
      await api.handler(post("rows", { limit: "5", region: "eu" })),
      await api.handler(post("rows", { region: "eu", limit: "5", ignored: "stripped by the schema" }))
    ]
    expect(answers.map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT", "HIT"])
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1)
    expect(runs.count).toBe(1)
  })

  it("keeps apart inputs that differ only where JSON would merge them, or in text that looks like a key's parts", async () => {
    let runs = 0
    const api = defineServe({ resultCache: true, queries: { echo: { cacheTtlMs: 60_000, query: ({ input }: { input: unknown }) => ({ run: ++runs, input: String((input as { a?: unknown }).a) }) } } })
    const inputs = [{ a: "x:y" }, { a: "x\\u003ay" }, { a: "t.acme" }, { a: 1 }, { a: "1" }, { a: null }, { a: Number.NaN }, { a: 0 }, { a: -0 }, { a: 1n }, {}]
    const first = []
    for (const input of inputs) first.push(await api.execute("echo", { input }))
    expect(runs).toBe(inputs.length)
    for (const [i, input] of inputs.entries()) expect(await api.execute("echo", { input })).toEqual(first[i])
    expect(runs).toBe(inputs.length)
    // An absent field and an undefined one are the same input, as in JSON.
    await api.execute("echo", { input: { a: undefined } })
    expect(runs).toBe(inputs.length)
  })

  it("shares an entry between two inputs exactly when their texts and keys are equal, whatever characters they hold (property)", async () => {
    let runs = 0
    const api = defineServe({ resultCache: true, queries: { echo: { cacheTtlMs: 60_000, query: () => ++runs } } })
    // Quotes, backslashes, control characters, colons, lone and paired surrogates, keys in any order.
    const text = fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom("", ":", "a:b", "\"", "\\", "\u0000", "\ud800", "😀", "\u003a"))
    const input = fc.dictionary(fc.constantFrom("a", "b", "c:d", "é"), text, { maxKeys: 3 })
    await fc.assert(
      fc.asyncProperty(input, input, async (x, y) => {
        await api.cache.invalidate()
        const before = runs
        await api.execute("echo", { input: x })
        await api.execute("echo", { input: y })
        const same = JSON.stringify(Object.entries(x).sort()) === JSON.stringify(Object.entries(y).sort())
        expect(runs - before).toBe(same ? 1 : 2)
      }),
      { numRuns: 150 }
    )
  })

  it("gives JSON, CSV and NDJSON answers from one entry, byte for byte what the uncached endpoint answers", async () => {
    const rows = [{ day: new Date("2025-01-02T00:00:00Z"), total: 10n, note: 'a "quoted", text' }]
    const cached = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, query: () => rows } } })
    const plain = defineServe({ queries: { rows: { cacheTtlMs: 60_000, query: () => rows } } })
    const ask = (api: typeof plain, accept: string) => Promise.resolve(api.handler(get("rows", {}, { accept })))
    const csvMiss = await ask(cached, "text/csv")
    const json = await ask(cached, "application/json")
    const ndjson = await ask(cached, "application/x-ndjson")
    const csvHit = await ask(cached, "text/csv")
    expect([csvMiss, json, ndjson, csvHit].map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT", "HIT"])
    for (const [answer, accept] of [[csvMiss, "text/csv"], [json, "application/json"], [ndjson, "application/x-ndjson"], [csvHit, "text/csv"]] as const) {
      const reference = await ask(plain, accept)
      expect(answer.body).toBe(reference.body)
      expect(answer.headers["content-type"]).toBe(reference.headers["content-type"])
      expect(answer.headers.etag).toBe(reference.headers.etag)
    }
    expect(await cached.cache.stats()).toMatchObject({ entries: 1, hits: 3, misses: 1 })
  })

  it("answers a hit's If-None-Match with 304 and keeps x-cache", async () => {
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, query: () => [{ a: 1 }] } } })
    const first = await api.handler(get("rows"))
    const revalidated = await api.handler(get("rows", {}, { "if-none-match": first.headers.etag! }))
    expect(revalidated.status).toBe(304)
    expect(revalidated.headers["x-cache"]).toBe("HIT")
    expect(revalidated.body).toBeNull()
  })

  it("leaves endpoints without a positive TTL alone, and every endpoint when resultCache is off", async () => {
    const { runs, query } = counted()
    const api = defineServe({
      resultCache: true,
      queries: { noTtl: query, noStore: { cacheTtlMs: 0, query }, headersOnly: { cacheTtlMs: null, query } }
    })
    for (const key of ["noTtl", "noStore", "headersOnly", "noTtl", "noStore", "headersOnly"]) {
      expect((await api.handler(get(key))).headers["x-cache"]).toBeUndefined()
    }
    expect(runs.count).toBe(6)
    const off = defineServe({ queries: { rows: { cacheTtlMs: 60_000, query } } })
    await off.handler(get("rows"))
    expect((await off.handler(get("rows"))).headers["x-cache"]).toBeUndefined()
    expect(runs.count).toBe(8)
    expect(off.cache.enabled).toBe(false)
    expect(await off.cache.stats()).toEqual({ hits: 0, misses: 0, entries: 0, bytes: 0 })
    expect(await off.cache.invalidate()).toBe(0)
  })

  it("expires entries after the endpoint's TTL", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    try {
      const { runs, query } = counted()
      const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 1_000, query } } })
      await api.handler(get("rows"))
      vi.advanceTimersByTime(999)
      expect((await api.handler(get("rows"))).headers["x-cache"]).toBe("HIT")
      vi.advanceTimersByTime(1)
      expect((await api.handler(get("rows"))).headers["x-cache"]).toBe("MISS")
      expect(runs.count).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("result cache: keys only of values whose text tells them apart", () => {
  it("serves an input holding a Redacted uncached: one token's answer never reaches another token", async () => {
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: {
        shared: {
          cacheTtlMs: 60_000,
          inputSchema: Schema.Struct({ token: Schema.Redacted(Schema.String) }),
          query: ({ input }: { input: { token: Redacted.Redacted<string> } }) => {
            runs++
            return { dashboard: Redacted.value(input.token) === "victim-share-token" ? "the victim's dashboard" : null }
          }
        }
      }
    })
    const victim = await api.handler(get("shared", { token: "victim-share-token" }))
    const guess = await api.handler(get("shared", { token: "guess" }))
    expect(JSON.parse(victim.body!)).toEqual({ dashboard: "the victim's dashboard" })
    expect([guess.headers["x-cache"], JSON.parse(guess.body!)]).toEqual(["MISS", { dashboard: null }])
    expect((await api.handler(get("shared", { token: "victim-share-token" }))).headers["x-cache"]).toBe("MISS")
    expect(runs).toBe(3)
    expect((await api.cache.stats()).entries).toBe(0)
  })

  it("serves callers told apart only by a closure, a symbol-keyed or a non-enumerable field uncached, each their own answer", async () => {
    const owner = Symbol("owner")
    const callerOf = (kind: string, user: string): ServeAuthContext => {
      if (kind === "closure") return { roles: ["user"], userId: () => user }
      if (kind === "symbol") return { roles: ["user"], [owner]: user }
      return Object.defineProperty({ roles: ["user"] }, "userId", { value: user, enumerable: false })
    }
    const userOf = (auth: ServeAuthContext): unknown => {
      const record = auth as Record<string | symbol, unknown>
      const id = record[owner] ?? record["userId"]
      return typeof id === "function" ? id() : id
    }
    const api = defineServe({
      resultCache: true,
      auth: ({ request }) => callerOf(String(request.headers?.["x-kind"]), String(request.headers?.["x-user"])),
      queries: { mine: { cacheTtlMs: 60_000, query: ({ ctx }: { ctx: { auth: ServeAuthContext } }) => ({ owner: userOf(ctx.auth) }) } }
    })
    for (const kind of ["closure", "symbol", "hidden"]) {
      for (const user of ["alice", "bob", "alice", "bob"]) {
        const answer = await api.handler(get("mine", {}, { "x-kind": kind, "x-user": user }))
        expect([kind, answer.headers["x-cache"], JSON.parse(answer.body!)]).toEqual([kind, "MISS", { owner: user }])
      }
    }
  })

  it("serves callers whose auth context holds a Redacted or is a class instance with #private state uncached, each their own answer", async () => {
    class Caller {
      readonly #user: string
      constructor(user: string) {
        this.#user = user
      }
      get user(): string {
        return this.#user
      }
    }
    const api = defineServe({
      resultCache: true,
      auth: ({ request }) => {
        const key = request.headers?.["x-api-key"]
        const user = request.headers?.["x-user"]
        if (typeof key === "string") return { roles: ["user"], apiKey: Redacted.make(key) }
        return typeof user === "string" ? (new Caller(user) as unknown as ServeAuthContext) : null
      },
      queries: {
        mine: {
          cacheTtlMs: 60_000,
          query: ({ ctx }: { ctx: { auth: ServeAuthContext } }) =>
            ({ owner: ctx.auth instanceof Caller ? ctx.auth.user : Redacted.value(ctx.auth.apiKey as Redacted.Redacted<string>) })
        }
      }
    })
    for (const [header, callers] of [["x-api-key", ["alice-key", "bob-key"]], ["x-user", ["alice", "bob"]]] as const) {
      for (const caller of [...callers, ...callers]) {
        const answer = await api.handler(get("mine", {}, { [header]: caller }))
        expect([answer.headers["x-cache"], JSON.parse(answer.body!)]).toEqual(["MISS", { owner: caller }])
      }
    }
  })

  it("still keys texts, numbers, plain and null-prototype objects, arrays, Dates, Maps, Sets and a parsed query string", async () => {
    let runs = 0
    const api = defineServe({ resultCache: true, queries: { echo: { cacheTtlMs: 60_000, query: () => ++runs } } })
    const inputs = [
      { a: [1, "x", null], b: { c: true } },
      Object.assign(Object.create(null) as object, { a: 1 }),
      { at: new Date(0) },
      { at: new Date(1) },
      { m: new Map([["k", 1]]) },
      { s: new Set([1, 2]) }
    ]
    for (let round = 0; round < 2; round++) for (const input of inputs) await api.execute("echo", { input })
    expect(runs).toBe(inputs.length)
    // Other objects (a class instance here) are served, uncached.
    class Range {
      constructor(readonly from: string) {}
    }
    for (let round = 0; round < 2; round++) await api.execute("echo", { input: new Range("2025-01-01") })
    expect(runs).toBe(inputs.length + 2)
    // Without an input schema the input is the parsed query string itself.
    await api.handler(get("echo", { region: "eu" }))
    expect((await api.handler(get("echo", { region: "eu" }))).headers["x-cache"]).toBe("HIT")
  })
})

describe("result cache: what is never stored", () => {
  it("does not store errors (ServeHttpErrors included) or empty (204) results; a failed run answers x-cache: MISS", async () => {
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: {
        flaky: {
          cacheTtlMs: 60_000,
          query: () => {
            runs++
            if (runs === 1) throw new ServeHttpError(404, "NOT_FOUND", "not yet")
            if (runs === 2) throw new Error("database hiccup")
            return { ok: runs }
          }
        },
        empty: { cacheTtlMs: 60_000, query: () => void runs++ }
      }
    })
    const notFound = await api.handler(get("flaky"))
    expect([notFound.status, notFound.headers["x-cache"]]).toEqual([404, "MISS"])
    expect((await api.handler(get("flaky"))).status).toBe(500)
    const ok = await api.handler(get("flaky"))
    expect([ok.status, ok.headers["x-cache"], ok.body]).toEqual([200, "MISS", '{"ok":3}'])
    expect((await api.handler(get("flaky"))).headers["x-cache"]).toBe("HIT")
    expect(runs).toBe(3)
    for (let i = 0; i < 2; i++) {
      const empty = await api.handler(get("empty"))
      expect([empty.status, empty.headers["x-cache"]]).toEqual([204, "MISS"])
    }
    expect(runs).toBe(5)
    expect((await api.cache.stats()).entries).toBe(1)
  })

  it("follows ctx.setCacheTtl: 0 or null for this request stores nothing, a positive TTL is the entry's", async () => {
    const store = makeTestResultCacheStore()
    let runs = 0
    const api = defineServe({
      resultCache: { store: testResultCacheStore(store) },
      queries: {
        tuned: {
          cacheTtlMs: 60_000,
          query: ({ input, ctx }: { input: { ttl?: string }; ctx: ServeContext }) => {
            runs++
            if (input.ttl !== undefined) ctx.setCacheTtl(input.ttl === "null" ? null : Number(input.ttl))
            return { ttl: input.ttl ?? "default" }
          }
        }
      }
    })
    for (const ttl of ["0", "null", "0", "null"]) {
      expect((await api.handler(get("tuned", { ttl }))).headers["x-cache"]).toBe("MISS")
    }
    expect(runs).toBe(4)
    await api.handler(get("tuned", { ttl: "5000" }))
    await api.handler(get("tuned"))
    expect(store.ttls).toEqual([5_000, 60_000])
    expect((await api.handler(get("tuned", { ttl: "5000" }))).headers["x-cache"]).toBe("HIT")
    // A TTL that is no duration is the handler's mistake: a 500, nothing stored, no `max-age=NaN`.
    for (const ttl of ["NaN", "Infinity", "-1"]) {
      const answer = await api.handler(get("tuned", { ttl }))
      expect([ttl, answer.status, answer.headers["cache-control"]]).toEqual([ttl, 500, undefined])
    }
    expect(store.ttls).toEqual([5_000, 60_000])
  })

  it("answers a hit's and a waiter's Cache-Control for what is left of the entry, as the run that stored it set its TTL", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    try {
      const api = defineServe({
        resultCache: true,
        queries: {
          today: {
            cacheTtlMs: 60_000,
            query: async ({ input, ctx }: { input: { ttl?: string }; ctx: ServeContext }) => {
              await new Promise((resolve) => setTimeout(resolve, 10))
              if (input.ttl !== undefined) ctx.setCacheTtl(Number(input.ttl))
              return { ttl: input.ttl ?? "default" }
            }
          }
        }
      })
      const maxAge = async (query: Record<string, string>) => (await api.handler(get("today", query))).headers["cache-control"]
      // The run and its waiters: the waiters get what the run set, not the endpoint's 60 s.
      const shortened = await Promise.all([1, 2, 3].map(() => Promise.resolve(api.handler(get("today", { ttl: "5000" })))))
      expect(shortened.map((answer) => [answer.headers["x-cache"], answer.headers["cache-control"]]))
        .toEqual([["MISS", "public, max-age=5"], ["HIT", "public, max-age=5"], ["HIT", "public, max-age=5"]])
      vi.advanceTimersByTime(3_000)
      expect(await maxAge({ ttl: "5000" })).toBe("public, max-age=2")
      vi.advanceTimersByTime(1_999)
      expect(await maxAge({ ttl: "5000" })).toBe("public, max-age=1")
      // An entry of the endpoint's TTL: its whole TTL at first (whole seconds, rounded up), then what is left.
      expect(await maxAge({})).toBe("public, max-age=60")
      expect(await maxAge({})).toBe("public, max-age=60")
      vi.advanceTimersByTime(10_500)
      expect(await maxAge({})).toBe("public, max-age=50")
    } finally {
      vi.useRealTimers()
    }
  })

  it("bypasses the cache for a request whose middleware set the TTL to 0 before next()", async () => {
    const { runs, query } = counted()
    const noCacheForAdmins: ServeMiddleware = (ctx, next) => {
      if (ctx.request.headers?.["x-admin"] === "1") ctx.setCacheTtl(0)
      return next()
    }
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, query, middlewares: [noCacheForAdmins] } } })
    await api.handler(get("rows"))
    const admin = await api.handler(get("rows", {}, { "x-admin": "1" }))
    expect([admin.headers["x-cache"], admin.headers["cache-control"]]).toEqual(["MISS", "no-store"])
    expect(runs.count).toBe(2)
    expect((await api.handler(get("rows"))).headers["x-cache"]).toBe("HIT")
  })
})

describe("result cache: the stages around it", () => {
  it("runs middlewares on hits: a rate limit counts cached answers too", async () => {
    const { runs, query } = counted()
    const api = defineServe({
      resultCache: true,
      queries: { rows: { cacheTtlMs: 60_000, query, middlewares: [rateLimit({ max: 2, keyBy: () => "everyone" })] } }
    })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await api.handler(get("rows"))).status)
    expect(statuses).toEqual([200, 200, 429])
    expect(runs.count).toBe(1)
  })

  it("hands middlewares a plain value of their own on a hit, and shapes what they return", async () => {
    const seen: Array<unknown> = []
    const envelope: ServeMiddleware = async (ctx, next) => {
      const result = (await next()) as Array<{ n: number }>
      seen.push(result)
      result[0]!.n++ // a middleware changing the value it got must not change the entry
      return { data: result, cached: ctx.request.headers?.["x-probe"] ?? "no" }
    }
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, query: () => [{ n: 1 }], middlewares: [envelope] } } })
    const miss = await api.handler(get("rows"))
    const hit = await api.handler(get("rows"))
    expect(hit.headers["x-cache"]).toBe("HIT")
    expect(JSON.parse(miss.body!)).toEqual({ data: [{ n: 2 }], cached: "no" })
    expect(hit.body).toBe(miss.body)
    expect(seen[0]).not.toBe(seen[1])
  })

  it.each([false, true])("encodes a middleware's own answer (no next()) by the output schema, as uncached (tracing %s)", async (tracing) => {
    const Out = Schema.Struct({ id: Schema.Number, at: Schema.Date })
    const answers: Record<string, unknown> = {
      extraField: { id: 1, at: new Date("2025-01-01T00:00:00Z"), internalNote: "secret" },
      invalid: { id: "not a number", at: "nope" }
    }
    const ownAnswer: ServeMiddleware = (ctx) => answers[String(ctx.request.headers?.["x-answer"])]
    for (const cacheTtlMs of [undefined, 60_000]) {
      const api = defineServe({
        resultCache: true,
        tracing,
        queries: { item: { cacheTtlMs, outputSchema: Out, middlewares: [ownAnswer], query: () => ({ id: 2, at: new Date(0) }) } }
      })
      const extra = await api.handler(get("item", {}, { "x-answer": "extraField" }))
      expect([cacheTtlMs, extra.status, extra.body]).toEqual([cacheTtlMs, 200, '{"id":1,"at":"2025-01-01T00:00:00.000Z"}'])
      expect([cacheTtlMs, (await api.handler(get("item", {}, { "x-answer": "invalid" }))).status]).toEqual([cacheTtlMs, 500])
    }
  })

  it("checks authentication and guards before the cache: a cached answer never reaches a refused caller", async () => {
    const { runs, query } = counted()
    const api = defineServe({
      resultCache: true,
      auth: ({ request }) => (request.headers?.["x-key"] === "admin" ? { roles: ["admin"] } : request.headers?.["x-key"] === "user" ? { roles: [] } : null),
      queries: { rows: { cacheTtlMs: 60_000, requiredRoles: ["admin"], query } }
    })
    expect((await api.handler(get("rows", {}, { "x-key": "admin" }))).status).toBe(200)
    expect((await api.handler(get("rows", {}, { "x-key": "admin" }))).headers["x-cache"]).toBe("HIT")
    const refused = [await api.handler(get("rows")), await api.handler(get("rows", {}, { "x-key": "user" }))]
    expect(refused.map((answer) => [answer.status, answer.headers["x-cache"]])).toEqual([[401, undefined], [403, undefined]])
    expect(runs.count).toBe(1)
  })

  it("serves in-process execute() from the same entries, each caller getting its own copy", async () => {
    const { runs, query } = counted()
    const api = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, inputSchema: Input, query } } })
    const first = await api.execute("rows", { input: { region: "eu" } })
    const second = await api.execute("rows", { input: { region: "eu" } })
    expect(second).toEqual(first)
    expect(second).not.toBe(first)
    expect((await api.handler(get("rows", { region: "eu" }))).headers["x-cache"]).toBe("HIT")
    expect(runs.count).toBe(1)
  })

  it("hands onRequestEnd a hit's result as a fresh value on each read", async () => {
    const results: Array<unknown> = []
    const api = defineServe({
      resultCache: true,
      hooks: { onRequestEnd: (event) => void results.push(event.result, event.result, { ...event }.result) },
      queries: { rows: { cacheTtlMs: 60_000, query: () => [{ a: 1 }] } }
    })
    await api.handler(get("rows"))
    await api.handler(get("rows"))
    expect(results).toEqual(Array.from({ length: 6 }, () => [{ a: 1 }]))
    expect(results[3]).not.toBe(results[4])
  })

  it("hands a hit's result to every listener of yours, whichever of queryserve's own listeners (metrics, log lines) are on", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    try {
      const api = defineServe({ resultCache: true, metrics: { public: true }, queryLogging: true, queries: { rows: { cacheTtlMs: 60_000, query: () => [{ a: 1 }] } } })
      const results: Array<unknown> = []
      const listen = () => api.queryLogger.on((event) => void (event.status === "completed" && results.push(event.result)))
      await api.handler(get("rows"))
      // Only queryserve's own listeners: a hit is answered and counted all the same.
      expect((await api.handler(get("rows"))).headers["x-cache"]).toBe("HIT")
      const stop = listen()
      await api.handler(get("rows"))
      stop()
      await api.handler(get("rows"))
      listen()
      await api.handler(get("rows"))
      expect(results).toEqual([[{ a: 1 }], [{ a: 1 }]])
      // Without any of queryserve's own listeners, too.
      const bare = defineServe({ resultCache: true, queries: { rows: { cacheTtlMs: 60_000, query: () => [{ a: 2 }] } } })
      const bareResults: Array<unknown> = []
      bare.queryLogger.on((event) => void (event.status === "completed" && bareResults.push(event.result)))
      await bare.handler(get("rows"))
      await bare.handler(get("rows"))
      expect(bareResults).toEqual([[{ a: 2 }], [{ a: 2 }]])
      const scrape = await api.handler({ method: "GET", path: "/api/analytics/metrics", headers: {} })
      expect(scrape.body).toContain('queryserve_result_cache_total{endpoint="rows",result="hit"} 4')
      await api.dispose()
    } finally {
      log.mockRestore()
    }
  })

  it("reports cacheHit on completed events and in both log formats, and the value as result", async () => {
    const events: Array<ServeQueryEvent> = []
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    try {
      const api = defineServe({
        resultCache: true,
        queryLogging: true,
        queries: { rows: { cacheTtlMs: 60_000, query: () => [{ a: 1 }] }, plain: () => [{ a: 2 }] }
      })
      api.queryLogger.on((event) => events.push(event))
      const json = defineServe({ resultCache: true, queryLogging: "json", queries: { rows: { cacheTtlMs: 60_000, query: () => [] } } })
      await api.handler(get("rows"))
      await api.handler(get("rows"))
      await api.handler(get("plain"))
      await json.handler(get("rows"))
      await json.handler(get("rows"))
      const completed = events.filter((event) => event.status === "completed")
      expect(completed.map((event) => [event.endpointKey, event.cacheHit])).toEqual([["rows", false], ["rows", true], ["plain", undefined]])
      expect(completed[1]!.result).toEqual([{ a: 1 }])
      // A hit's result is parsed from the stored JSON on each read: a fresh value, where a miss's result sits, seen by copies and JSON.
      const [miss, hit] = [completed[0]!, completed[1]!]
      expect(hit.result).not.toBe(hit.result)
      expect(Object.keys(hit)).toEqual(Object.keys(miss))
      expect({ ...hit }.result).toEqual([{ a: 1 }])
      expect(JSON.parse(JSON.stringify(hit)).result).toEqual([{ a: 1 }])
      expect(events.filter((event) => event.status === "started").every((event) => !("cacheHit" in event))).toBe(true)
      const lines = await writtenLogLines(log)
      expect(lines.slice(0, 3).map((line) => line.replace(/\(\d+ms/, "(Nms"))).toEqual([
        "✓ GET /api/analytics/rows → 200 (Nms, cache miss)",
        "✓ GET /api/analytics/rows → 200 (Nms, cache hit)",
        "✓ GET /api/analytics/plain → 200 (Nms)"
      ])
      expect(lines.slice(3).map((line) => JSON.parse(line).cacheHit)).toEqual([false, true])
    } finally {
      log.mockRestore()
    }
  })
})

afterEach(() => vi.restoreAllMocks())
