import {
  DatabaseUnreachable,
  defineServe,
  Forbidden,
  GatewayTimeout,
  InternalError,
  NotFound,
  PayloadTooLarge,
  QueryFailure,
  RateLimited,
  ServeHttpError,
  ServiceUnavailable,
  toErrorResponse,
  Unauthorized,
  ValidationError
} from "queryserve"
import { describe, expect, it } from "vitest"

const cases = [
  [new ValidationError({ message: "bad input", issues: [{ path: ["a"], message: "required" }] }), 400, "VALIDATION_ERROR", { issues: [{ path: ["a"], message: "required" }] }],
  [new Unauthorized({ message: "who are you", reason: "missing_credentials" }), 401, "UNAUTHORIZED", { reason: "missing_credentials" }],
  [new Forbidden({ message: "no", reason: "missing_role", required: ["admin"] }), 403, "FORBIDDEN", { reason: "missing_role", required: ["admin"] }],
  [new NotFound({ message: "nothing here" }), 404, "NOT_FOUND", undefined],
  [new PayloadTooLarge({ message: "too big", limitBytes: 10 }), 413, "PAYLOAD_TOO_LARGE", { limitBytes: 10 }],
  [new RateLimited({ message: "slow down", retryAfterSeconds: 7 }), 429, "RATE_LIMITED", { retryAfterSeconds: 7 }],
  [new QueryFailure({ message: "query failed", queryId: "q1" }), 500, "QUERY_FAILURE", { queryId: "q1" }],
  [new InternalError({ cause: new Error("secret") }), 500, "INTERNAL_SERVER_ERROR", undefined],
  [new DatabaseUnreachable({ message: "db down" }), 503, "DATABASE_UNREACHABLE", undefined],
  [new ServiceUnavailable({ message: "draining" }), 503, "SERVICE_UNAVAILABLE", undefined],
  [new GatewayTimeout({ message: "too slow", timeoutMs: 5 }), 504, "GATEWAY_TIMEOUT", { timeoutMs: 5 }]
] as const

describe("the one error mapping", () => {
  it.each(cases)("%s → %i %s", async (error, status, type, details) => {
    const api = defineServe({ queries: { fail: () => Promise.reject(error) } })
    const response = await api.handler({ method: "GET", path: "/api/analytics/fail" })
    expect(response.status).toBe(status)
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8")
    const body = JSON.parse(response.body!)
    expect(body.error.type).toBe(type)
    expect(body.error.details).toEqual(details)
    expect(typeof body.error.message).toBe("string")
    expect(toErrorResponse(error).status).toBe(status)
  })

  it("covers all eleven error types", () => {
    expect(new Set(cases.map(([, , type]) => type)).size).toBe(11)
  })

  it("adds Retry-After to 429 and Allow to 405", () => {
    expect(toErrorResponse(new RateLimited({ message: "x", retryAfterSeconds: 3 })).headers).toEqual({ "retry-after": "3" })
    expect(toErrorResponse(new NotFound({ message: "x", allow: ["GET", "HEAD"] }))).toMatchObject({ status: 405, headers: { allow: "GET, HEAD" } })
  })

  it("a ServeHttpError thrown by a handler or middleware answers with its own status, type, message, details and headers", async () => {
    const api = defineServe({
      middlewares: [(ctx, next) => (ctx.request.query?.block ? Promise.reject(new ServeHttpError(418, "TEAPOT", "short and stout")) : next())],
      queries: {
        custom: () => {
          throw new ServeHttpError(409, "QUERY_FAILURE", "version conflict", { details: { version: 3 }, headers: { "x-version": "3" } })
        }
      }
    })
    const fromHandler = await api.handler({ method: "GET", path: "/api/analytics/custom" })
    expect(fromHandler.status).toBe(409)
    expect(fromHandler.headers["x-version"]).toBe("3")
    expect(JSON.parse(fromHandler.body!)).toEqual({ error: { type: "QUERY_FAILURE", message: "version conflict", details: { version: 3 } } })
    const fromMiddleware = await api.handler({ method: "GET", path: "/api/analytics/custom", query: { block: "1" } })
    expect(fromMiddleware.status).toBe(418)
    expect(JSON.parse(fromMiddleware.body!)).toEqual({ error: { type: "TEAPOT", message: "short and stout" } })
  })

  it("maps driver connection errors to 503 DATABASE_UNREACHABLE", async () => {
    const api = defineServe({
      queries: { down: () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:5432"), { code: "ECONNREFUSED" })) }
    })
    const response = await api.handler({ method: "GET", path: "/api/analytics/down" })
    expect(response.status).toBe(503)
    expect(JSON.parse(response.body!)).toEqual({ error: { type: "DATABASE_UNREACHABLE", message: "The database is unreachable" } })
    expect(response.body).not.toContain("10.0.0.1")
  })

  it("a result with no JSON text (a function, a symbol, a toJSON giving undefined or throwing) is a 500 error, cached or not", async () => {
    const seen: Array<string> = []
    const results: Record<string, () => unknown> = {
      aFunction: () => () => 1,
      aSymbol: () => Symbol("x"),
      toJsonUndefined: () => ({ toJSON: () => undefined }),
      toJsonThrows: () => ({
        toJSON: () => {
          throw new Error("password=hunter2")
        }
      })
    }
    const api = defineServe({
      resultCache: true,
      hooks: { onError: (event) => seen.push(event.queryKey) },
      queries: Object.fromEntries(
        Object.entries(results).flatMap(([key, query]) => [[key, { query }], [`${key}Cached`, { cacheTtlMs: 60_000, query }]])
      )
    })
    const keys = Object.keys(results).flatMap((key) => [key, `${key}Cached`])
    for (const key of keys) {
      const response = await api.handler({ method: "GET", path: `/api/analytics/${key}`, headers: {} })
      expect([key, response.status, response.body]).toEqual([key, 500, '{"error":{"type":"INTERNAL_SERVER_ERROR","message":"An unexpected error occurred"}}'])
    }
    expect(seen).toEqual(keys)
  })

  it("an unexpected error is a 500 that leaks nothing, while onError receives the raw error", async () => {
    const raw = new Error("SELECT * FROM secret_table WHERE password = 'hunter2'")
    const seen: Array<{ error: unknown; queryKey: string; requestId: string }> = []
    const api = defineServe({
      hooks: { onError: (event) => seen.push(event) },
      queries: {
        sync: () => {
          throw raw
        },
        async: async () => {
          throw raw
        },
        notAnError: () => Promise.reject("plain string with SELECT")
      }
    })
    for (const key of ["sync", "async", "notAnError"]) {
      const response = await api.handler({ method: "GET", path: `/api/analytics/${key}`, headers: { "x-request-id": `r-${key}` } })
      expect(response.status).toBe(500)
      expect(JSON.parse(response.body!)).toEqual({ error: { type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" } })
      expect(response.body).not.toMatch(/SELECT|secret|hunter2|at /)
    }
    expect(seen.map((event) => [event.queryKey, event.requestId])).toEqual([["sync", "r-sync"], ["async", "r-async"], ["notAnError", "r-notAnError"]])
    expect(seen[0]!.error).toBe(raw)
    expect(seen[1]!.error).toBe(raw)
    expect(seen[2]!.error).toBe("plain string with SELECT")
  })
})
