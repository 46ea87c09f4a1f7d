/**
 * @hypequery/serve's exported helpers, as queryserve provides them: the authorization checks, the
 * typed auth helper, the CORS helpers and the tenant warning (docs/migrating-from-hypequery.md).
 */
import {
  buildCorsHeaders,
  buildPreflightHeaders,
  checkRoleAuthorization,
  checkScopeAuthorization,
  createAuthSystem,
  defineServe,
  handleCorsRequest,
  resolveCorsConfig,
  type ResolvedCorsConfig,
  type ServeAuthContext,
  type ServeContext,
  type ServeRequest,
  warnTenantMisconfiguration
} from "queryserve"
import { describe, expect, expectTypeOf, it, vi } from "vitest"

const get = (path: string): ServeRequest => ({ method: "GET", path: `/api/analytics/${path}`, headers: {}, query: {} })

/** Runs `run` and returns what it said with console.warn. */
const warningsOf = (run: () => void): Array<string> => {
  const warned: Array<string> = []
  const spy = vi.spyOn(console, "warn").mockImplementation((message: unknown) => void warned.push(String(message)))
  try {
    run()
  } finally {
    spy.mockRestore()
  }
  return warned
}

describe("checkRoleAuthorization and checkScopeAuthorization", () => {
  const editor: ServeAuthContext = { roles: ["editor"], scopes: ["read", "export"] }

  it("grants a role when the caller holds any one of those required, and names them all when it holds none", () => {
    expect(checkRoleAuthorization(editor, ["admin", "editor"])).toEqual({ ok: true })
    expect(checkRoleAuthorization(editor, ["admin", "owner"])).toEqual({ ok: false, missing: ["admin", "owner"], reason: "MISSING_ROLE" })
  })

  it("grants scopes only when the caller holds every one, and then names every required scope", () => {
    expect(checkScopeAuthorization(editor, ["read", "export"])).toEqual({ ok: true })
    expect(checkScopeAuthorization(editor, ["read", "write"])).toEqual({ ok: false, missing: ["read", "write"], reason: "MISSING_SCOPE" })
  })

  it("refuses no caller, or one without roles or scopes, and requires nothing when nothing is listed", () => {
    expect(checkRoleAuthorization(null, ["admin"])).toMatchObject({ ok: false, reason: "MISSING_ROLE" })
    expect(checkScopeAuthorization({}, ["read"])).toMatchObject({ ok: false, reason: "MISSING_SCOPE" })
    expect(checkRoleAuthorization(null, [])).toEqual({ ok: true })
    expect(checkScopeAuthorization(null, [])).toEqual({ ok: true })
  })

  it("decides as an API's guards do for the same caller", async () => {
    const callers: ReadonlyArray<ServeAuthContext> = [{ roles: ["viewer"], scopes: ["read"] }, { roles: ["admin"], scopes: ["read"] }, { roles: ["admin"] }]
    for (const caller of callers) {
      const api = defineServe({
        auth: () => caller,
        queries: { report: { query: () => 1, requiredRoles: ["admin", "owner"], requiredScopes: ["read"] } }
      })
      const allowed = checkRoleAuthorization(caller, ["admin", "owner"]).ok && checkScopeAuthorization(caller, ["read"]).ok
      expect((await api.handler(get("report"))).status).toBe(allowed ? 200 : 403)
    }
  })
})

describe("createAuthSystem", () => {
  it("hands back the strategy it is given, which then guards an API as any strategy does", async () => {
    const { useAuth, TypedAuth } = createAuthSystem({ roles: ["admin", "viewer"] as const, scopes: ["read"] as const })
    const strategy = () => ({ roles: ["viewer" as const] })
    expect(useAuth(strategy)).toBe(strategy)
    expectTypeOf(TypedAuth.roles).toEqualTypeOf<ReadonlyArray<"admin" | "viewer"> | undefined>()
    expectTypeOf(TypedAuth.scopes).toEqualTypeOf<ReadonlyArray<"read"> | undefined>()
    const api = defineServe({
      auth: useAuth(strategy),
      queries: { adminOnly: { query: () => 1, requiredRoles: ["admin"] }, anyone: { query: () => 2, requiresAuth: true } }
    })
    expect((await api.handler(get("adminOnly"))).status).toBe(403)
    expect((await api.handler(get("anyone"))).status).toBe(200)
  })
})

describe("the CORS helpers", () => {
  it("resolve nothing (or false) to no CORS, and fill in the defaults around the options given", () => {
    expect(resolveCorsConfig(undefined)).toBeNull()
    expect(resolveCorsConfig(false)).toBeNull()
    expect(resolveCorsConfig({ origin: ["https://a.example"], maxAge: 5 })).toEqual({
      origin: ["https://a.example"],
      methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      allowedHeaders: ["Content-Type", "Authorization", "X-Request-ID"],
      exposedHeaders: [],
      credentials: false,
      maxAge: 5
    })
  })

  it("refuse what the cors option refuses: credentials for every origin, and an origin no browser sends", () => {
    expect(() => resolveCorsConfig({ credentials: true })).toThrow(/credentials: true/)
    expect(() => resolveCorsConfig({ origin: "*", credentials: true })).toThrow(/credentials: true/)
    expect(() => resolveCorsConfig({ origin: "https://a.example/" })).toThrow(/would never match/)
  })

  it("answer `*` to any origin, or reflect an allowed one with Vary, credentials and the exposed headers listed", () => {
    expect(buildCorsHeaders(resolveCorsConfig(true)!, "https://any.example")).toEqual({ "access-control-allow-origin": "*" })
    const config = resolveCorsConfig({ origin: (origin) => origin.endsWith(".example"), credentials: true, exposedHeaders: ["x-total"] })!
    expect(buildCorsHeaders(config, "https://b.example")).toEqual({
      "access-control-allow-origin": "https://b.example",
      vary: "Origin",
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": "x-total"
    })
  })

  it("send nothing to a refused origin, to a request without one, or when the origin predicate throws", () => {
    const config = resolveCorsConfig({ origin: ["https://a.example"] })!
    expect(buildCorsHeaders(config, "https://evil.example")).toEqual({})
    expect(buildCorsHeaders(config, undefined)).toEqual({})
    expect(buildPreflightHeaders(config, "https://evil.example")).toEqual({})
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const throwing = resolveCorsConfig({ origin: () => { throw new Error("bad origin") } })!
      expect(buildCorsHeaders(throwing, "https://a.example")).toEqual({})
    } finally {
      errors.mockRestore()
    }
  })

  it("add methods, allowed headers and max-age to a preflight, and work on a config built by hand", () => {
    const byHand: ResolvedCorsConfig = {
      origin: "https://a.example",
      methods: ["GET"],
      allowedHeaders: ["authorization", "x-tenant"],
      exposedHeaders: [],
      credentials: false,
      maxAge: 60
    }
    expect(buildPreflightHeaders(byHand, "https://a.example")).toEqual({
      "access-control-allow-origin": "https://a.example",
      vary: "Origin",
      "access-control-allow-methods": "GET",
      "access-control-allow-headers": "authorization, x-tenant",
      "access-control-max-age": "60"
    })
  })

  it("answer an OPTIONS request with a 204 preflight, and give any other request the headers for its answer", () => {
    const config = resolveCorsConfig({ origin: "https://a.example" })
    // The Origin header is read in any case, as every header is.
    const preflight = handleCorsRequest(config, { method: "OPTIONS", headers: { Origin: "https://a.example" } })
    expect(preflight.corsHeaders).toEqual({})
    expect(preflight.preflightResponse).toMatchObject({ status: 204, body: "", headers: { "access-control-max-age": "86400" } })
    expect(handleCorsRequest(config, { method: "GET", headers: { origin: "https://a.example" } })).toEqual({
      preflightResponse: null,
      corsHeaders: { "access-control-allow-origin": "https://a.example", vary: "Origin" }
    })
    expect(handleCorsRequest(null, { method: "OPTIONS", headers: { origin: "https://a.example" } })).toEqual({ preflightResponse: null, corsHeaders: {} })
  })
})

describe("warnTenantMisconfiguration", () => {
  it("warns once per query that one without tenant config answers every caller with every tenant's rows", () => {
    const warned = warningsOf(() => {
      warnTenantMisconfiguration({ queryKey: "helpersUnscoped", hasTenantConfig: false, hasTenantId: false })
      warnTenantMisconfiguration({ queryKey: "helpersUnscoped", hasTenantConfig: false, hasTenantId: true })
    })
    expect(warned).toHaveLength(1)
    expect(warned[0]).toMatch(/^\[queryserve\] query "helpersUnscoped" has no tenant config/)
  })

  it("says for a manual-mode query with a tenant what defineServe says when such a query is defined, once", () => {
    const fromDefine = warningsOf(() => {
      defineServe({
        tenant: { extract: (auth) => auth?.tenantId },
        queries: { helpersDefined: { query: ({ ctx }: { ctx: ServeContext }) => ctx.tenantId } }
      })
    })
    const fromHelper = warningsOf(() => {
      warnTenantMisconfiguration({ queryKey: "helpersManual", hasTenantConfig: true, hasTenantId: true, mode: "manual" })
      warnTenantMisconfiguration({ queryKey: "helpersManual", hasTenantConfig: true, hasTenantId: true, mode: "manual" })
    })
    expect(fromDefine).toHaveLength(1)
    expect(fromHelper).toEqual([fromDefine[0]!.replace("helpersDefined", "helpersManual")])
  })

  it("says nothing for a configured query in another mode, or in manual mode without a tenant", () => {
    const warned = warningsOf(() => {
      warnTenantMisconfiguration({ queryKey: "helpersInjected", hasTenantConfig: true, hasTenantId: true, mode: "auto-inject" })
      warnTenantMisconfiguration({ queryKey: "helpersDefault", hasTenantConfig: true, hasTenantId: true })
      warnTenantMisconfiguration({ queryKey: "helpersNoTenant", hasTenantConfig: true, hasTenantId: false, mode: "manual" })
    })
    expect(warned).toEqual([])
  })
})
