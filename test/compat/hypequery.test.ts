/**
 * Code written for @hypequery/serve, run against queryserve: each feature of it queryserve takes over,
 * as hypequery behaves (docs/migrating-from-hypequery.md lists them, and what differs on purpose).
 */
import { createServer, IncomingMessage, type ServerResponse } from "node:http"
import { Socket } from "node:net"
import { Effect, Schema } from "effect"
import {
  apiKeyAuth,
  createApiKeyStrategy,
  createBearerTokenStrategy,
  createNodeHandler,
  defineServe,
  initServe,
  makeMemoryRateLimitStore,
  MemoryRateLimitStore,
  query,
  rateLimit,
  type ServeAuthContext,
  type ServeContext,
  type ServeRequest
} from "queryserve"
import { describe, expect, expectTypeOf, it, vi } from "vitest"
import { z } from "zod"

const get = (path: string, headers: Record<string, string> = {}): ServeRequest =>
  ({ method: "GET", path: `/api/analytics/${path}`, headers, query: {} })

const errorOf = (body: unknown): { type: string; message: string } => (JSON.parse(String(body)) as { error: { type: string; message: string } }).error

describe("rateLimit", () => {
  it("answers 429 with `message`, and sends no X-RateLimit-* headers with headers: false (Retry-After stays)", async () => {
    const api = defineServe({
      queries: { limited: { query: () => "ok", middlewares: [rateLimit({ max: 1, keyBy: () => "k", message: "Slow down", headers: false })] } }
    })
    const first = await api.handler(get("limited"))
    expect(first.status).toBe(200)
    expect(Object.keys(first.headers).filter((name) => name.startsWith("x-ratelimit"))).toEqual([])
    const second = await api.handler(get("limited"))
    expect(second.status).toBe(429)
    expect(errorOf(second.body)).toMatchObject({ type: "RATE_LIMITED", message: "Slow down" })
    expect(second.headers["retry-after"]).toBe("60")
    expect(Object.keys(second.headers).filter((name) => name.startsWith("x-ratelimit"))).toEqual([])
    // Nor does the OpenAPI document promise them.
    const document = JSON.stringify(await (await api.handler(get("openapi.json"))).body)
    expect(document).not.toContain("X-RateLimit-Limit")
  })

  it("tells the handler its window in ctx.locals._rateLimit", async () => {
    const seen: Array<unknown> = []
    const api = defineServe({
      queries: {
        limited: {
          middlewares: [rateLimit({ max: 3, windowMs: 10_000, keyBy: () => "k" })],
          query: ({ ctx }: { ctx: ServeContext }) => void seen.push(ctx.locals._rateLimit)
        }
      }
    })
    await api.handler(get("limited"))
    await api.handler(get("limited"))
    expect(seen).toEqual([
      { limit: 3, remaining: 2, resetMs: expect.any(Number) },
      { limit: 3, remaining: 1, resetMs: expect.any(Number) }
    ])
    const { resetMs } = seen[1] as { resetMs: number }
    expect(resetMs).toBeGreaterThan(9_000)
    expect(resetMs).toBeLessThanOrEqual(10_000)
  })
})

describe("the memory rate-limit store", () => {
  it("destroy() forgets every window; the store counts from zero again", () => {
    const store = makeMemoryRateLimitStore()
    store.increment("a", 60_000)
    store.increment("a", 60_000)
    store.destroy()
    expect(store.getTtl("a")).toBe(0)
    expect(store.increment("a", 60_000)).toBe(1)
  })

  it("is a class: new MemoryRateLimitStore() limits through rateLimit({ store }), and the factory makes one", async () => {
    expect(makeMemoryRateLimitStore()).toBeInstanceOf(MemoryRateLimitStore)
    const store = new MemoryRateLimitStore()
    const api = defineServe({
      queries: { limited: { query: () => "ok", middlewares: [rateLimit({ max: 1, keyBy: () => "k", store })] } }
    })
    expect((await api.handler(get("limited"))).status).toBe(200)
    expect((await api.handler(get("limited"))).status).toBe(429)
    expect(store.count("k")).toBe(2)
    store.destroy()
    expect((await api.handler(get("limited"))).status).toBe(200)
  })

  it("takes { maxKeys }, and hypequery's cleanup interval (a number) without changing anything", () => {
    const small = new MemoryRateLimitStore({ maxKeys: 2 })
    for (const key of ["a", "b", "c"]) small.increment(key, 60_000)
    expect(["a", "b", "c"].map((key) => small.count(key))).toEqual([0, 1, 1])
    const hypequeryStyle = new MemoryRateLimitStore(60_000)
    expect(hypequeryStyle.increment("a", 1_000)).toBe(1)
    expect(hypequeryStyle.getTtl("a")).toBeGreaterThan(900)
  })
})

describe("object-style queries: query({ input, output, query }).execute()", () => {
  const { query: shared, define } = initServe({
    auth: apiKeyAuth({ keys: { k1: { id: "u", roles: ["analyst"] } } }),
    context: () => ({ factor: 2 })
  })
  const calls: Array<unknown> = []
  const doubled = shared({
    input: z.object({ n: z.number() }),
    output: z.object({ doubled: z.number(), caller: z.string() }),
    requiredRoles: ["analyst"],
    query: ({ input, ctx }) => {
      calls.push(input)
      return { doubled: input.n * ctx.factor, caller: ctx.auth === null ? "none" : String(ctx.auth.id) }
    }
  })

  it("runs in this process with initServe's context, its input validated, and no caller", async () => {
    await expect(doubled.execute({ input: { n: 3 } })).resolves.toEqual({ doubled: 6, caller: "none" })
    expectTypeOf(doubled.execute).parameter(0).toEqualTypeOf<{ readonly input?: { n: number }; readonly context?: Readonly<Record<string, unknown>>; readonly request?: Partial<ServeRequest> } | undefined>()
    expectTypeOf(doubled.execute).returns.resolves.toEqualTypeOf<{ doubled: number; caller: string }>()
  })

  it("merges `context` over the factory's values", async () => {
    await expect(doubled.execute({ input: { n: 3 }, context: { factor: 10 } })).resolves.toEqual({ doubled: 30, caller: "none" })
  })

  it("refuses an invalid input as api.execute does (400 VALIDATION_ERROR), without running the handler", async () => {
    calls.length = 0
    await expect(doubled.execute({ input: { n: "three" } as never })).rejects.toMatchObject({ status: 400, type: "VALIDATION_ERROR" })
    expect(calls).toEqual([])
  })

  it("refuses an answer its output schema does not accept (500)", async () => {
    const wrong = query({ output: Schema.Struct({ total: Schema.Number }), query: () => ({ total: "many" }) as never })
    await expect(wrong.execute()).rejects.toMatchObject({ status: 500, type: "INTERNAL_SERVER_ERROR" })
  })

  it("is also a query definition: served by an API, with its schemas, strategies and guards", async () => {
    const api = define({ queries: { doubled } })
    const ask = (headers: Record<string, string>, n = "4") =>
      api.handler({ method: "GET", path: "/api/analytics/doubled", headers, query: { n } })
    expect((await ask({})).status).toBe(401)
    const answer = await ask({ "x-api-key": "k1" })
    expect(answer.status).toBe(200)
    expect(JSON.parse(String(answer.body))).toEqual({ doubled: 8, caller: "u" })
    expect((await ask({ "x-api-key": "k1" }, "four")).status).toBe(400)
    await expect(api.execute("doubled", { input: { n: 1 }, trustedAuth: { id: "v", roles: ["viewer"] } })).rejects.toMatchObject({ status: 403 })
  })

  it("`query` on its own (no initServe): an empty context, the request given, and a handler's Effect run", async () => {
    const plain = query({ input: Schema.Struct({ name: Schema.String }), query: ({ input, ctx }) => `${input.name}:${ctx.request.method}` })
    await expect(plain.execute({ input: { name: "ada" }, request: { method: "GET" } })).resolves.toBe("ada:GET")
    await expect(plain.execute({ input: { name: "ada" } })).resolves.toBe("ada:POST")
    await expect(query({ query: () => Effect.succeed(5) }).execute()).resolves.toBe(5)
  })
})

describe("apiKeyAuth({ allowMissing })", () => {
  it.each([true, false])("allowMissing: %s: no key is no caller: 401 missing_credentials, a public endpoint runs", async (allowMissing) => {
    const api = defineServe({
      auth: apiKeyAuth({ allowMissing, validate: (key) => (key === "good" ? { id: "u" } : null) }),
      queries: { closed: { query: () => "in" }, open: { query: () => "open", requiresAuth: false } }
    })
    const missing = await api.handler(get("closed"))
    expect(missing.status).toBe(401)
    expect(JSON.parse(String(missing.body)).error.details).toEqual({ reason: "missing_credentials" })
    expect((await api.handler(get("open"))).status).toBe(200)
    expect((await api.handler(get("closed", { "x-api-key": "good" }))).status).toBe(200)
    expect((await api.handler(get("closed", { "x-api-key": "bad" }))).status).toBe(401)
  })
})

describe("the OpenAPI document", () => {
  it("writes the required roles and scopes into each operation's description", async () => {
    const api = defineServe({
      auth: apiKeyAuth({ keys: {} }),
      queries: {
        guarded: { query: () => 1, description: "Revenue.", requiredRoles: ["analyst", "admin"], requiredScopes: ["read"] },
        open: { query: () => 1, requiresAuth: false }
      }
    })
    const document = JSON.parse(String((await api.handler(get("openapi.json"))).body)) as {
      paths: Record<string, { get: { description?: string } }>
    }
    expect(document.paths["/api/analytics/guarded"]!.get.description).toBe(
      "Revenue.\n\n**Required roles:** analyst, admin\n\n**Required scopes:** read"
    )
    expect(document.paths["/api/analytics/open"]!.get.description).toBeUndefined()
  })
})

describe("createNodeHandler's promise", () => {
  const api = defineServe({ queries: { ping: { query: () => ({ ok: true }) } } })
  const listener = createNodeHandler(api.handler)

  it("settles for a response object that is no stream, once it is ended, and never rejects", async () => {
    const req = new IncomingMessage(new Socket())
    Object.assign(req, { method: "GET", url: "/api/analytics/ping", headers: { host: "localhost" }, httpVersionMinor: 1 })
    const ended: Array<unknown> = []
    const headers: Record<string, unknown> = {}
    const res = {
      statusCode: 0,
      headersSent: false,
      writableFinished: false,
      setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = value),
      writeHead(status: number, given?: Record<string, unknown>) {
        this.statusCode = status
        Object.assign(headers, given)
        return this
      },
      end(body?: unknown) {
        ended.push(body)
        this.headersSent = true
        return this
      }
    }
    await expect(listener(req, res as unknown as ServerResponse)).resolves.toBeUndefined()
    expect(res.statusCode).toBe(200)
    expect(String(ended[0])).toBe('{"ok":true}')
  })

  it("settles even when the objects lack what Node's have, and says so", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      await expect(listener({} as IncomingMessage, {} as ServerResponse)).resolves.toBeUndefined()
      expect(spy).toHaveBeenCalledOnce()
    } finally {
      spy.mockRestore()
    }
  })

  it("settles once a real response is written", async () => {
    const server = createServer((req, res) => void listener(req, res).then(() => server.emit("settled")))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const settled = new Promise((resolve) => server.once("settled", resolve))
      const answer = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/api/analytics/ping`)
      expect(await answer.json()).toEqual({ ok: true })
      await settled
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("the manual-mode warning", () => {
  it("says once per query, when it is defined, that a manual-mode query must filter by ctx.tenantId itself", async () => {
    const warned: Array<string> = []
    const spy = vi.spyOn(console, "warn").mockImplementation((message: unknown) => void warned.push(String(message)))
    try {
      const api = defineServe({
        auth: () => ({ tenantId: "t1" }),
        tenant: { extract: (auth) => auth?.tenantId },
        queries: {
          manualReport: { query: ({ ctx }: { ctx: ServeContext }) => ctx.tenantId },
          injectedReport: { query: () => 1, tenant: { mode: "auto-inject" } },
          // Its own config names manual mode: a decision written down, not warned about.
          decidedReport: { query: ({ ctx }: { ctx: ServeContext }) => ctx.tenantId, tenant: { mode: "manual" } }
        }
      })
      expect((await api.handler(get("manualReport"))).status).toBe(200)
      await api.handler(get("manualReport"))
      expect(warned).toEqual([
        `[queryserve] query "manualReport" uses tenant mode "manual": filter every query it runs by ctx.tenantId yourself, ` +
          `or set tenant.mode to "auto-inject" to have ctx's table sources filtered for you.`
      ])
    } finally {
      spy.mockRestore()
    }
  })
})

describe("execute(…, { trustedAuth })", () => {
  const strategyCalls: Array<unknown> = []
  const api = defineServe({
    auth: () => {
      strategyCalls.push("called")
      return null
    },
    tenant: { extract: (auth) => auth?.tenantId, mode: "manual" },
    queries: {
      report: { query: ({ ctx }: { ctx: ServeContext }) => ({ tenant: ctx.tenantId, user: ctx.auth?.id }), requiredRoles: ["analyst"] }
    }
  })

  it("skips the strategies and runs as the given caller, with its tenant", async () => {
    await expect(api.execute("report", { trustedAuth: { id: "ana", roles: ["analyst"], tenantId: "acme" } }))
      .resolves.toEqual({ tenant: "acme", user: "ana" })
    expect(strategyCalls).toEqual([])
  })

  it("keeps the guards: a caller without the role is refused", async () => {
    await expect(api.execute("report", { trustedAuth: { id: "bob", roles: ["viewer"], tenantId: "acme" } }))
      .rejects.toMatchObject({ status: 403, details: { reason: "missing_role" } })
  })

  it("keeps the tenancy: a caller without a tenant is refused", async () => {
    await expect(api.execute("report", { trustedAuth: { id: "root", roles: ["analyst"] } }))
      .rejects.toMatchObject({ status: 403, details: { reason: "missing_tenant" } })
  })
})

describe("query.tenantOptional()", () => {
  it("lets a caller without a tenant through unscoped, and still scopes a caller with one", async () => {
    const { query, define } = initServe({
      auth: ({ request }): ServeAuthContext => {
        const tenant = request.headers?.["x-tenant"]
        return typeof tenant === "string" ? { id: "u", tenantId: tenant } : { id: "ops" }
      },
      tenant: { extract: (auth) => auth?.tenantId }
    })
    const api = define({
      queries: {
        optional: query.tenantOptional().query(({ ctx }) => ({ tenant: ctx.tenantId })),
        required: query.query(({ ctx }) => ({ tenant: ctx.tenantId }))
      }
    })
    const ask = (key: string, headers: Record<string, string> = {}) => api.handler({ method: "GET", path: `/api/analytics/${key}`, headers })
    expect(JSON.parse((await ask("optional")).body!)).toEqual({ tenant: null })
    expect(JSON.parse((await ask("optional", { "x-tenant": "acme" })).body!)).toEqual({ tenant: "acme" })
    expect((await ask("required")).status).toBe(403)
  })
})

describe("security.verboseAuthErrors", () => {
  const makeApi = (verbose: boolean) =>
    defineServe({
      auth: (): ServeAuthContext => ({ id: "u", roles: ["viewer"], scopes: ["read"] }),
      security: { verboseAuthErrors: verbose },
      queries: {
        admin: { requiredRoles: ["admin"], query: () => ({}) },
        write: { requiredScopes: ["read", "write"], query: () => ({}) }
      }
    })
  const detailsOf = async (api: ReturnType<typeof makeApi>, key: string) => {
    const response = await api.handler({ method: "GET", path: `/api/analytics/${key}` })
    expect(response.status).toBe(403)
    return JSON.parse(response.body!).error.details
  }

  it("on: a 403 lists the caller's own roles or scopes as details.actual", async () => {
    const api = makeApi(true)
    expect(await detailsOf(api, "admin")).toEqual({ reason: "missing_role", required: ["admin"], actual: ["viewer"] })
    expect(await detailsOf(api, "write")).toEqual({ reason: "missing_scope", required: ["read", "write"], actual: ["read"] })
  })

  it("off (the default): a 403 tells only what is required", async () => {
    expect(await detailsOf(makeApi(false), "admin")).toEqual({ reason: "missing_role", required: ["admin"] })
  })
})

describe("createApiKeyStrategy and createBearerTokenStrategy", () => {
  const callers: Record<string, ServeAuthContext> = { k1: { id: "u1" }, t1: { id: "u2" } }
  const validate = (credential: string) => callers[credential] ?? null
  const whoAmI = { query: ({ ctx }: { ctx: ServeContext }) => ({ id: ctx.auth?.id }) }
  const ask = async (api: { handler: ReturnType<typeof defineServe>["handler"] }, headers: Record<string, string>, query: Record<string, string> = {}) => {
    const answer = await api.handler({ method: "GET", path: "/api/analytics/whoAmI", headers, query })
    return answer.status === 200 ? JSON.parse(String(answer.body)).id : answer.status
  }

  it("an API key from the query parameter first, else the header (a Bearer prefix dropped); none or an unknown one is no caller", async () => {
    const api = defineServe({ auth: createApiKeyStrategy({ queryParam: "apiKey", validate }), queries: { whoAmI } })
    expect(await ask(api, {}, { apiKey: "k1" })).toBe("u1")
    expect(await ask(api, { authorization: "Bearer k1" })).toBe("u1")
    expect(await ask(api, { Authorization: "k1" })).toBe("u1")
    expect(await ask(api, { authorization: "Bearer nope" })).toBe(401)
    expect(await ask(api, {})).toBe(401)
    const document = JSON.parse(String((await api.handler(get("openapi.json"))).body))
    expect(Object.values(document.components.securitySchemes)).toEqual([{ type: "apiKey", in: "query", name: "apiKey" }])
  })

  it("a bearer token after the prefix, trimmed; another prefix or an empty token is no caller", async () => {
    const api = defineServe({ auth: createBearerTokenStrategy({ validate: async (token) => validate(token) }), queries: { whoAmI } })
    expect(await ask(api, { authorization: "Bearer   t1  " })).toBe("u2")
    expect(await ask(api, { authorization: "Basic t1" })).toBe(401)
    expect(await ask(api, { authorization: "Bearer " })).toBe(401)
    const custom = defineServe({ auth: createBearerTokenStrategy({ header: "x-token", prefix: "Token ", validate }), queries: { whoAmI } })
    expect(await ask(custom, { "x-token": "Token t1" })).toBe("u2")
    expect(await ask(custom, { authorization: "Bearer t1" })).toBe(401)
  })
})

