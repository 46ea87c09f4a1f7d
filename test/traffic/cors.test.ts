import { type CorsOptions, defineServe, rateLimit, type ServeRequest, startNodeServer } from "queryserve"
import { describe, expect, it, vi } from "vitest"

const APP = "https://app.example.com"
const OTHER = "https://evil.example.net"

const makeApi = (cors: true | CorsOptions) =>
  defineServe({
    cors,
    queries: {
      ping: () => "pong",
      limited: { query: () => "ok", middlewares: [rateLimit({ max: 0 })] },
      secret: { query: () => "s", requiresAuth: true }
    }
  })

const call = (api: ReturnType<typeof makeApi>, path: string, headers: Record<string, string>, method = "GET") =>
  Promise.resolve(api.handler({ method, path: `/api/analytics/${path}`, headers, remoteAddress: "198.51.100.1" } satisfies ServeRequest))

const preflight = (api: ReturnType<typeof makeApi>, origin: string, requestHeaders?: string) =>
  call(api, "ping", {
    origin,
    "access-control-request-method": "POST",
    ...(requestHeaders === undefined ? {} : { "access-control-request-headers": requestHeaders })
  }, "OPTIONS")

describe("CORS", () => {
  it("cors: true allows any origin with `*` on every response: success, 401, 404 and 429", async () => {
    const api = makeApi(true)
    for (const [path, status] of [["ping", 200], ["secret", 401], ["missing", 404], ["limited", 429]] as const) {
      const response = await call(api, path, { origin: OTHER })
      expect(response.status).toBe(status)
      expect(response.headers["access-control-allow-origin"]).toBe("*")
      expect(response.headers["access-control-expose-headers"]).toContain("x-request-id")
    }
    const limited = await call(api, "limited", { origin: OTHER })
    expect(limited.headers["access-control-expose-headers"]).toContain("retry-after")
  })

  it("answers a preflight with 204, no body, the allowed methods and the requested headers", async () => {
    const response = await preflight(makeApi(true), APP, "content-type, x-api-key")
    expect(response.status).toBe(204)
    expect(response.body).toBeNull()
    expect(response.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS",
      "access-control-allow-headers": "content-type, x-api-key",
      vary: "Access-Control-Request-Headers"
    })
    expect(response.headers["x-request-id"]).toBeDefined()
  })

  it("an exact origin string reflects that origin only; others get no CORS headers but Vary: Origin", async () => {
    const api = makeApi({ origin: APP })
    const allowed = await call(api, "ping", { origin: APP })
    expect(allowed.headers).toMatchObject({ "access-control-allow-origin": APP, vary: "Origin" })
    const refused = await call(api, "ping", { origin: OTHER })
    expect(refused.status).toBe(200)
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined()
    expect(refused.headers.vary).toBe("Origin")
    const refusedPreflight = await preflight(api, OTHER)
    expect(refusedPreflight.status).toBe(204)
    expect(refusedPreflight.headers["access-control-allow-origin"]).toBeUndefined()
    expect(refusedPreflight.headers["access-control-allow-methods"]).toBeUndefined()
  })

  it("accepts a list of origins, a predicate, and '*'", async () => {
    const list = makeApi({ origin: [APP, "http://localhost:3000"] })
    expect((await call(list, "ping", { origin: "http://localhost:3000" })).headers["access-control-allow-origin"]).toBe("http://localhost:3000")
    expect((await call(list, "ping", { origin: OTHER })).headers["access-control-allow-origin"]).toBeUndefined()

    const predicate = makeApi({ origin: (origin) => origin.endsWith(".example.com") })
    expect((await call(predicate, "ping", { origin: APP })).headers["access-control-allow-origin"]).toBe(APP)
    expect((await call(predicate, "ping", { origin: OTHER })).headers["access-control-allow-origin"]).toBeUndefined()

    expect((await call(makeApi({ origin: "*" }), "ping", { origin: OTHER })).headers["access-control-allow-origin"]).toBe("*")
  })

  // `new URL("null")` throws: the usual predicate meets `Origin: null` from sandboxed frames and file pages.
  it("refuses an origin its predicate throws for, or answers anything but true for, and answers the request", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const throwing = makeApi({ origin: (origin) => new URL(origin).hostname.endsWith(".example.com") })
      for (const origin of ["null", "not a url", "null"]) {
        const answer = await call(throwing, "ping", { origin })
        expect([answer.status, answer.headers["access-control-allow-origin"], answer.headers.vary]).toEqual([200, undefined, "Origin"])
      }
      expect((await call(throwing, "ping", { origin: APP })).headers["access-control-allow-origin"]).toBe(APP)
      expect(errors).toHaveBeenCalledTimes(1)
      // An async predicate's promise is no `true`: it allows nothing rather than everything.
      const asynchronous = makeApi({ origin: (async () => true) as unknown as (origin: string) => boolean })
      expect((await call(asynchronous, "ping", { origin: OTHER })).headers["access-control-allow-origin"]).toBeUndefined()
    } finally {
      errors.mockRestore()
    }
  })

  // Browsers send `scheme://host[:port]`, lower case, no path: any other spelling would refuse the site it names.
  it.each([
    ["a trailing slash", "https://app.example.com/", /"https:\/\/app\.example\.com\/" would never match: a browser sends an origin as "https:\/\/app\.example\.com"; write it so/],
    ["upper case", "https://App.Example.com", /would never match: a browser sends an origin as "https:\/\/app\.example\.com"/],
    ["a default port", "https://app.example.com:443", /as "https:\/\/app\.example\.com"/],
    ["no scheme", "app.example.com", /would never match: a browser sends an origin as scheme:\/\/host\[:port\]/],
    ["null", "null", /"null" would never match/],
    ["an empty list", [], /cors\.origin lists no origin/],
    ["a RegExp", /example\.com$/, /cors\.origin takes "\*", an origin, a list of origins or a function; for a pattern, give a function/]
  ])("refuses an origin with %s at defineServe, saying how to write it", (_name, origin, message) => {
    expect(() => makeApi({ origin: origin as CorsOptions["origin"] })).toThrow(message)
    expect(() => makeApi({ origin: [APP, origin as string] })).toThrow(Array.isArray(origin) || origin instanceof RegExp ? /./ : message)
  })

  it("with credentials reflects an allowed origin and never sends `*`", async () => {
    const response = await call(makeApi({ origin: APP, credentials: true }), "ping", { origin: APP })
    expect(response.headers).toMatchObject({
      "access-control-allow-origin": APP,
      "access-control-allow-credentials": "true",
      vary: "Origin"
    })
    const refused = await call(makeApi({ origin: APP, credentials: true }), "ping", { origin: OTHER })
    expect(refused.headers["access-control-allow-credentials"]).toBeUndefined()
  })

  // Regression: `credentials: true` without `origin` reflected any Origin, "null" included, with credentials.
  it("refuses at defineServe credentials: true without an explicit origin, or with '*' alone or in a list", () => {
    for (const options of [{ credentials: true }, { origin: "*", credentials: true }, { origin: [APP, "*"], credentials: true }]) {
      expect(() => makeApi(options)).toThrow(/credentials: true .*Set cors\.origin to the sites that may call/)
    }
    expect(() => makeApi({ origin: "*" })).not.toThrow()
  })

  it("with credentials and a fixed origin, a foreign or `null` Origin gets no CORS grant on any path or preflight", async () => {
    const api = makeApi({ origin: APP, credentials: true })
    for (const origin of ["null", OTHER]) {
      for (const path of ["ping", "secret", "missing", "limited"]) {
        const response = await call(api, path, { origin })
        expect(response.headers["access-control-allow-origin"]).toBeUndefined()
        expect(response.headers["access-control-allow-credentials"]).toBeUndefined()
      }
      const refusedPreflight = await preflight(api, origin)
      expect(refusedPreflight.headers["access-control-allow-origin"]).toBeUndefined()
      expect(refusedPreflight.headers["access-control-allow-credentials"]).toBeUndefined()
    }
  })

  it("honours methods, allowedHeaders and maxAge in preflights", async () => {
    const api = makeApi({ origin: APP, methods: ["GET", "POST"], allowedHeaders: ["content-type", "authorization"], maxAge: 600 })
    const response = await preflight(api, APP, "x-something-else")
    expect(response.headers).toMatchObject({
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "GET,POST",
      "access-control-allow-headers": "content-type,authorization",
      "access-control-max-age": "600",
      vary: "Origin"
    })
  })

  it("reaches a browser-style cross-origin fetch over a real server", async () => {
    const api = makeApi({ origin: APP, credentials: true })
    const server = await startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1" })
    try {
      const pre = await fetch(`${server.url}/api/analytics/ping`, {
        method: "OPTIONS",
        headers: { origin: APP, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" }
      })
      expect(pre.status).toBe(204)
      expect(pre.headers.get("access-control-allow-headers")).toBe("x-api-key")
      const actual = await fetch(`${server.url}/api/analytics/ping`, { headers: { origin: APP } })
      expect(actual.headers.get("access-control-allow-origin")).toBe(APP)
      expect(actual.headers.get("access-control-allow-credentials")).toBe("true")
      expect(await actual.json()).toBe("pong")
    } finally {
      await server.stop()
    }
  })
})
