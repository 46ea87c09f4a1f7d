import {
  apiKeyAuth,
  type AuthStrategy,
  defineServe,
  getHeader,
  initServe,
  requireAuthMiddleware,
  requireRoleMiddleware,
  requireScopeMiddleware,
  type ServeAuthContext,
  ServeHttpError,
  type ServeLifecycleHooks,
  type ServeRequest,
  Unauthorized
} from "queryserve"
import { describe, expect, it, vi } from "vitest"

const get = (key: string, headers: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path: `/api/analytics/${key}`,
  headers
})

const body = (text: string | null) => JSON.parse(text ?? "null") as { error: { type: string; message: string; details?: unknown } }

/** A strategy that resolves callers from `x-user: name:role1,role2:scope1` and records that it ran. */
const headerUser = (header = "x-user"): AuthStrategy & { calls: number } => {
  const strategy = Object.assign(
    ({ request }: { request: ServeRequest }): ServeAuthContext | null => {
      strategy.calls++
      const value = getHeader(request, header)
      if (value === undefined) return null
      const [name, roles = "", scopes = ""] = value.split(":")
      return { name, roles: roles.split(",").filter(Boolean), scopes: scopes.split(",").filter(Boolean) }
    },
    { calls: 0 }
  )
  return strategy
}

const whoAmI = ({ ctx }: { ctx: { auth: ServeAuthContext | null } }) => ctx.auth

describe("authentication strategies", () => {
  it("runs global strategies in order; the first non-null caller wins", async () => {
    const first = headerUser("x-first")
    const second = headerUser("x-second")
    const api = defineServe({ auth: [first, second], queries: { me: whoAmI } })
    const response = await api.handler(get("me", { "x-second": "bob" }))
    expect(JSON.parse(response.body!)).toMatchObject({ name: "bob" })
    expect([first.calls, second.calls]).toEqual([1, 1])
    await api.handler(get("me", { "x-first": "ann", "x-second": "bob" }))
    // The first strategy found a caller, so the second never ran.
    expect([first.calls, second.calls]).toEqual([2, 1])
  })

  it("tries an endpoint's own strategy before the global ones and awaits async strategies", async () => {
    const global = headerUser()
    const own: AuthStrategy = async ({ request }) => (getHeader(request, "x-token") === "t" ? { name: "service" } : null)
    const api = defineServe({ auth: global, queries: { me: { query: whoAmI, auth: own } } })
    expect(JSON.parse((await api.handler(get("me", { "x-token": "t", "x-user": "ann" }))).body!)).toEqual({ name: "service" })
    expect(global.calls).toBe(0)
    expect(JSON.parse((await api.handler(get("me", { "x-user": "ann" }))).body!)).toMatchObject({ name: "ann" })
  })

  // `key === secret && { ... }` answers false for a wrong key: only an object is a caller.
  it("takes no answer but an object for a caller: false, 0, \"\" or true from a strategy or apiKeyAuth's validate is no caller", async () => {
    for (const value of [false, 0, "", true]) {
      const strategies = [() => value as unknown as ServeAuthContext, async () => value as unknown as ServeAuthContext]
      for (const strategy of strategies) {
        const api = defineServe({ auth: strategy, queries: { secret: () => "rows" } })
        expect([value, (await api.handler(get("secret"))).status]).toEqual([value, 401])
      }
      const keyed = defineServe({ auth: apiKeyAuth({ validate: () => value as unknown as ServeAuthContext }), queries: { secret: () => "rows" } })
      const refused = await keyed.handler(get("secret", { "x-api-key": "wrong" }))
      expect([value, refused.status, body(refused.body).error.details]).toEqual([value, 401, { reason: "invalid_credentials" }])
    }
  })

  it("a strategy that refuses with Unauthorized: 401 with its reason, and later strategies do not run", async () => {
    const later = headerUser()
    const refusing: AuthStrategy = () => {
      throw new Unauthorized({ message: "bad signature", reason: "invalid_credentials" })
    }
    const api = defineServe({ auth: [refusing, later], queries: { me: whoAmI } })
    const response = await api.handler(get("me", { "x-user": "ann" }))
    expect(response.status).toBe(401)
    expect(body(response.body).error).toEqual({ type: "UNAUTHORIZED", message: "bad signature", details: { reason: "invalid_credentials" } })
    expect(later.calls).toBe(0)
  })

  // A bug in a strategy is no verdict on the credentials: answered as a handler's bug is, and said.
  it.each([
    ["throws", (): never => { throw new TypeError("cannot read the key table") }],
    ["rejects", (): Promise<never> => Promise.reject(new TypeError("cannot reach the key table"))]
  ])("a strategy that %s anything else: 500 INTERNAL_SERVER_ERROR, logged once and given to onError", async (_, broken) => {
    const later = headerUser()
    const seen: Array<unknown> = []
    const logged: Array<ReadonlyArray<unknown>> = []
    const spy = vi.spyOn(console, "error").mockImplementation((...args: Array<unknown>) => void logged.push(args))
    try {
      const api = defineServe({ auth: [broken, later], hooks: { onError: (event) => void seen.push(event.error) }, queries: { me: whoAmI } })
      for (let i = 0; i < 2; i++) {
        const response = await api.handler(get("me", { "x-user": "ann" }))
        expect(response.status).toBe(500)
        expect(body(response.body).error.type).toBe("INTERNAL_SERVER_ERROR")
      }
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBeInstanceOf(TypeError)
      expect(logged).toHaveLength(1)
      expect(String(logged[0]![0])).toContain("auth strategy threw")
      expect(logged[0]![1]).toBe(seen[0])
      expect(later.calls).toBe(0)
    } finally {
      spy.mockRestore()
    }
  })

  it("with a global strategy every endpoint requires auth unless public; auth: null and .public() skip strategies", async () => {
    const strategy = headerUser()
    const { query, define } = initServe({ auth: strategy })
    const api = define({
      queries: {
        guarded: query.query(() => "in"),
        viaNull: { query: () => "open", auth: null },
        viaPublic: query.public().query(() => "open")
      }
    })
    const denied = await api.handler(get("guarded"))
    expect(denied.status).toBe(401)
    expect(body(denied.body).error.details).toEqual({ reason: "missing_credentials" })
    expect((await api.handler(get("viaNull"))).status).toBe(200)
    expect((await api.handler(get("viaPublic"))).status).toBe(200)
    expect(strategy.calls).toBe(1)
    expect(api.describe().map((endpoint) => [endpoint.key, endpoint.requiresAuth])).toEqual([
      ["guarded", true],
      ["viaNull", false],
      ["viaPublic", false]
    ])
  })

  it(".requireAuth() without any strategy refuses every caller with 401 missing_credentials", async () => {
    const { query, define } = initServe({})
    const api = define({ queries: { locked: query.requireAuth().query(() => "never") } })
    const response = await api.handler(get("locked"))
    expect(response.status).toBe(401)
    expect(body(response.body).error.details).toEqual({ reason: "missing_credentials" })
  })

  it("execute() authenticates with the request headers it is given, or takes a caller from context.auth", async () => {
    const api = defineServe({ auth: headerUser(), queries: { me: whoAmI } })
    await expect(api.execute("me", { request: { headers: { "X-User": "ann" } } })).resolves.toMatchObject({ name: "ann" })
    await expect(api.execute("me", { context: { auth: { name: "preset" } } })).resolves.toEqual({ name: "preset" })
    const failure = await api.execute("me").catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ServeHttpError)
    expect(failure).toMatchObject({ status: 401, type: "UNAUTHORIZED", details: { reason: "missing_credentials" } })
  })
})

describe("apiKeyAuth", () => {
  const tenants: Record<string, ServeAuthContext> = {
    "key-acme": { tenantId: "acme", roles: ["analyst"] },
    "key-globex": { tenantId: "globex", roles: ["admin"] }
  }

  const byValidate = apiKeyAuth({ validate: async (key) => tenants[key] ?? null })
  const byTable = apiKeyAuth({ header: "Authorization-Key", keys: tenants })

  it.each([["validate", byValidate], ["keys", byTable]] as const)("resolves the caller of a valid key (%s)", async (_, strategy) => {
    const header = strategy === byValidate ? "x-api-key" : "authorization-key"
    const api = defineServe({ auth: strategy, queries: { me: whoAmI } })
    const response = await api.handler(get("me", { [header.toUpperCase()]: "key-globex" }))
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body!)).toEqual({ tenantId: "globex", roles: ["admin"] })
  })

  it.each([["validate", byValidate, "x-api-key"], ["keys", byTable, "Authorization-Key"]] as const)(
    "tells a missing key (missing_credentials) from an invalid one (invalid_credentials) (%s)",
    async (_, strategy, header) => {
      const api = defineServe({ auth: strategy, queries: { me: whoAmI } })
      const missing = await api.handler(get("me"))
      expect(missing.status).toBe(401)
      expect(body(missing.body).error.details).toEqual({ reason: "missing_credentials" })
      const invalid = await api.handler(get("me", { [header]: "key-acme-but-wrong" }))
      expect(invalid.status).toBe(401)
      expect(body(invalid.body).error).toEqual({
        type: "UNAUTHORIZED",
        message: `The API key in the ${header} header is not valid`,
        details: { reason: "invalid_credentials" }
      })
    }
  )

  it("refuses a key that is only a prefix or an extension of a valid one", async () => {
    const api = defineServe({ auth: byTable, queries: { me: whoAmI } })
    for (const key of ["key-acm", "key-acmee", "KEY-ACME", ""]) {
      const response = await api.handler(get("me", { "authorization-key": key }))
      expect(response.status).toBe(401)
    }
  })

  it("refuses the keys a cycled or padded comparison could confuse with a valid one, and accepts a key beyond Latin-1 exactly", async () => {
    const wide: Record<string, ServeAuthContext> = { "ключ-1": { tenantId: "wide" }, ab: { tenantId: "short" } }
    const api = defineServe({ auth: apiKeyAuth({ keys: { ...tenants, ...wide } }), queries: { me: whoAmI } })
    const status = async (key: string) => (await api.handler(get("me", { "x-api-key": key }))).status
    // Twice a valid key, a valid key and a character whose code is 0 past its end, one character off at the end.
    for (const key of ["abab", "key-acmekey-acme", "ab\u0000", "a", "key-acmf", "ключ-2", "ключ-1 "]) expect(await status(key)).toBe(401)
    expect(await status("ab")).toBe(200)
    expect(await status("ключ-1")).toBe(200)
    expect(await status("key-acme")).toBe(200)
  })
})

describe("guards", () => {
  const api = () => {
    const { query, define } = initServe({ auth: headerUser() })
    return define({
      queries: {
        report: query.requireRole("admin", "analyst").query(() => "report"),
        export: query.requireScope("read", "export").query(() => "export"),
        both: query.requireRole("admin").requireScope("export").query(() => "both")
      }
    })
  }

  it("roles: one of them is enough (OR); none is 403 missing_role with the required list", async () => {
    expect((await api().handler(get("report", { "x-user": "ann:analyst" }))).status).toBe(200)
    const refused = await api().handler(get("report", { "x-user": "ann:viewer" }))
    expect(refused.status).toBe(403)
    expect(body(refused.body).error).toMatchObject({
      type: "FORBIDDEN",
      details: { reason: "missing_role", required: ["admin", "analyst"] }
    })
    expect((await api().handler(get("report"))).status).toBe(401)
  })

  it("scopes: all of them are needed (AND); a missing one is 403 missing_scope", async () => {
    expect((await api().handler(get("export", { "x-user": "ann::read,export,write" }))).status).toBe(200)
    const refused = await api().handler(get("export", { "x-user": "ann::read" }))
    expect(refused.status).toBe(403)
    expect(body(refused.body).error.details).toEqual({ reason: "missing_scope", required: ["read", "export"] })
  })

  it("checks roles before scopes", async () => {
    const refused = await api().handler(get("both", { "x-user": "ann:viewer:" }))
    expect(body(refused.body).error.details).toMatchObject({ reason: "missing_role" })
    expect((await api().handler(get("both", { "x-user": "ann:admin:export" }))).status).toBe(200)
  })

  // Strategies in plain JavaScript may put anything in roles and scopes: a string is a list of
  // names, never a text searched for one (`"nonadmin".includes("admin")`).
  it("reads roles and scopes given as a string as space-separated names, and anything else as none", async () => {
    const run = async (auth: Record<string, unknown>) => {
      const { query, define } = initServe({ auth: () => auth as ServeAuthContext })
      const api = define({ queries: { admin: query.requireRole("admin").query(() => "a"), write: query.requireScope("write").query(() => "w") } })
      return [(await api.handler(get("admin"))).status, (await api.handler(get("write"))).status]
    }
    expect(await run({ roles: "nonadmin", scopes: "rewrite" })).toEqual([403, 403])
    expect(await run({ roles: "viewer admin", scopes: "read write" })).toEqual([200, 200])
    expect(await run({ roles: { admin: true }, scopes: 7 })).toEqual([403, 403])
    expect(await run({ roles: ["admin", 1], scopes: [null, "write"] })).toEqual([200, 200])
    const middleware = defineServe({ queries: { x: { query: () => "x", middlewares: [requireRoleMiddleware("admin")] } } })
    const refused = await middleware.execute("x", { context: { auth: { roles: "nonadmin" } as unknown as ServeAuthContext } }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ status: 403 })
  })

  it("the middleware helpers make the same checks with the same errors", async () => {
    // No strategies: the endpoint itself requires nothing, so only the middleware decides.
    const run = (middleware: ReturnType<typeof requireAuthMiddleware>, auth: ServeAuthContext | null) =>
      defineServe({ queries: { x: { query: () => "x", middlewares: [middleware] } } })
        .execute("x", { context: { auth } })
        .then(() => "allowed", (error: ServeHttpError) => ({ status: error.status, type: error.type, details: error.details }))
    expect(await run(requireAuthMiddleware(), null)).toEqual({ status: 401, type: "UNAUTHORIZED", details: { reason: "missing_credentials" } })
    expect(await run(requireRoleMiddleware("admin", "analyst"), { roles: ["viewer"] })).toEqual({
      status: 403,
      type: "FORBIDDEN",
      details: { reason: "missing_role", required: ["admin", "analyst"] }
    })
    expect(await run(requireScopeMiddleware("read", "export"), { scopes: ["read"] })).toEqual({
      status: 403,
      type: "FORBIDDEN",
      details: { reason: "missing_scope", required: ["read", "export"] }
    })
    expect(await run(requireAuthMiddleware(), { name: "ann" })).toBe("allowed")
    expect(await run(requireRoleMiddleware("admin", "analyst"), { roles: ["analyst"] })).toBe("allowed")
    expect(await run(requireScopeMiddleware("read", "export"), { scopes: ["export", "read"] })).toBe("allowed")
  })

  it("onAuthFailure reports missing and invalid credentials (401); onAuthorizationFailure refused roles, scopes and tenants (403)", async () => {
    const onAuthFailure = vi.fn<NonNullable<ServeLifecycleHooks["onAuthFailure"]>>()
    const onAuthorizationFailure = vi.fn<NonNullable<ServeLifecycleHooks["onAuthorizationFailure"]>>()
    const { query, define } = initServe({
      auth: apiKeyAuth({ keys: { good: { roles: ["viewer"], scopes: [] } } }),
      hooks: { onAuthFailure, onAuthorizationFailure }
    })
    const api = define({
      queries: {
        admin: query.requireRole("admin").query(() => "a"),
        write: query.requireScope("write").query(() => "w"),
        tenanted: query.tenant({ extract: (auth) => auth?.tenantId }).query(() => "t")
      }
    })
    const request = get("admin", { "x-request-id": "req-1" })
    await api.handler(request)
    await api.handler(get("admin", { "x-api-key": "bad" }))
    await api.handler(get("admin", { "x-api-key": "good" }))
    await api.handler(get("write", { "x-api-key": "good" }))
    await api.handler(get("tenanted", { "x-api-key": "good" }))
    expect(onAuthFailure.mock.calls.map(([event]) => [event.queryKey, event.reason])).toEqual([
      ["admin", "missing_credentials"],
      ["admin", "invalid_credentials"]
    ])
    expect(onAuthFailure.mock.calls[0]![0]).toEqual({ requestId: "req-1", queryKey: "admin", reason: "missing_credentials", request })
    expect(onAuthorizationFailure.mock.calls.map(([event]) => [event.queryKey, event.reason, event.required])).toEqual([
      ["admin", "missing_role", ["admin"]],
      ["write", "missing_scope", ["write"]],
      ["tenanted", "missing_tenant", []]
    ])
    expect(onAuthorizationFailure.mock.calls[0]![0]).toEqual({
      requestId: expect.any(String),
      queryKey: "admin",
      reason: "missing_role",
      required: ["admin"],
      request: expect.objectContaining({ path: "/api/analytics/admin" })
    })
    // Successful calls report nothing.
    onAuthFailure.mockClear()
    onAuthorizationFailure.mockClear()
    const allowed = define({ queries: { open: query.public().query(() => 1), viewer: query.requireRole("viewer").query(() => 2) } })
    expect((await allowed.handler(get("open"))).status).toBe(200)
    expect((await allowed.handler(get("viewer", { "x-api-key": "good" }))).status).toBe(200)
    expect(onAuthFailure).not.toHaveBeenCalled()
    expect(onAuthorizationFailure).not.toHaveBeenCalled()
  })
})
