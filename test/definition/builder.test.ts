import { Schema } from "effect"
import { defineServe, ServeHttpError, type ServeQueryEvent, type ServeRequest } from "queryserve"
import { describe, expect, it, vi } from "vitest"

const get = (path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path,
  query,
  headers
})

const json = (body: string | null): unknown => (body === null ? null : JSON.parse(body))

describe("defineServe builder", () => {
  const makeApi = () =>
    defineServe({
      queries: {
        revenue: {
          inputSchema: Schema.Struct({ region: Schema.String }),
          query: ({ input }: { input: { region: string } }) => ({ region: input.region, total: 42 })
        },
        ping: () => "pong"
      }
    })

  it("serves each query at basePath + '/' + key with GET by default", async () => {
    const api = makeApi()
    const response = await api.handler(get("/api/analytics/revenue", { region: "eu" }))
    expect(response.status).toBe(200)
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8")
    expect(json(response.body)).toEqual({ region: "eu", total: 42 })
    expect(json((await api.handler(get("/api/analytics/ping"))).body)).toBe("pong")
  })

  it("honours a custom basePath", async () => {
    const api = defineServe({ basePath: "/v1/", queries: { ping: () => "pong" } })
    expect(api.basePath).toBe("/v1")
    expect((await api.handler(get("/v1/ping"))).status).toBe(200)
    expect((await api.handler(get("/api/analytics/ping"))).status).toBe(404)
  })

  it("route() adds another path and method for an existing endpoint", async () => {
    const api = makeApi()
    api.route("/v2/revenue", "revenue", { method: "POST" })
    const viaPost = await api.handler({
      method: "POST",
      path: "/api/analytics/v2/revenue",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ region: "us" })
    })
    expect(viaPost.status).toBe(200)
    expect(json(viaPost.body)).toEqual({ region: "us", total: 42 })
    expect((await api.handler(get("/api/analytics/revenue", { region: "eu" }))).status).toBe(200)
    expect(() => api.route("/x", "missing" as "revenue")).toThrow(/no query named "missing"/)
  })

  it("route() also accepts the endpoint object itself", async () => {
    const ping = { query: () => "pong" }
    const api = defineServe({ queries: { ping } })
    api.route("/health", ping)
    expect(json((await api.handler(get("/api/analytics/health"))).body)).toBe("pong")
  })

  it("use() appends a global middleware that wraps every endpoint", async () => {
    const api = makeApi()
    api.use(async (ctx, next) => {
      ctx.setHeader("x-wrapped", "yes")
      const result = await next()
      return typeof result === "object" ? { ...result, wrapped: true } : result
    })
    const response = await api.handler(get("/api/analytics/revenue", { region: "eu" }))
    expect(response.headers["x-wrapped"]).toBe("yes")
    expect(json(response.body)).toEqual({ region: "eu", total: 42, wrapped: true })
  })

  it("runs the query once when a middleware calls next() twice: the second call throws, a 500", async () => {
    let runs = 0
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const seen: Array<unknown> = []
    const api = defineServe({
      hooks: { onError: (event) => seen.push(event.error) },
      queries: { count: () => ++runs }
    })
    api.use(async (_ctx, next) => {
      await next()
      return next()
    })
    try {
      expect((await api.handler(get("/api/analytics/count"))).status).toBe(500)
      expect(runs).toBe(1)
      expect(String(seen[0])).toContain("A middleware called next() more than once")
    } finally {
      errors.mockRestore()
    }
  })

  it("useAuth() adds a global strategy: endpoints then require credentials", async () => {
    const api = makeApi()
    expect((await api.handler(get("/api/analytics/ping"))).status).toBe(200)
    api.useAuth(({ request }) => (request.headers?.["x-user"] ? { id: String(request.headers["x-user"]) } : null))
    const anonymous = await api.handler(get("/api/analytics/ping"))
    expect(anonymous.status).toBe(401)
    expect(json(anonymous.body)).toEqual({
      error: { type: "UNAUTHORIZED", message: "Authentication required", details: { reason: "missing_credentials" } }
    })
    expect((await api.handler(get("/api/analytics/ping", {}, { "x-user": "ann" }))).status).toBe(200)
    expect(api.describe().every((endpoint) => endpoint.requiresAuth)).toBe(true)
  })

  it("execute() and run() run a query in-process and return its result", async () => {
    const api = makeApi()
    await expect(api.execute("revenue", { input: { region: "apac" } })).resolves.toEqual({ region: "apac", total: 42 })
    await expect(api.run("revenue", { input: { region: "emea" } })).resolves.toEqual({ region: "emea", total: 42 })
  })

  it("execute() without input runs like a request without parameters: optional fields absent, no input for a schema of undefined", async () => {
    const api = defineServe({
      queries: {
        optional: {
          inputSchema: Schema.Struct({ region: Schema.optional(Schema.String) }),
          query: ({ input }: { input: { region?: string } }) => ({ region: input.region ?? "all" })
        },
        nothing: { inputSchema: Schema.Undefined, query: ({ input }: { input: undefined }) => ({ input: input === undefined ? "none" : typeof input }) },
        required: {
          inputSchema: Schema.Struct({ region: Schema.String }),
          query: ({ input }: { input: { region: string } }) => input.region
        }
      }
    })
    for (const key of ["optional", "nothing"] as const) {
      const overHttp = await api.handler(get(`/api/analytics/${key}`))
      expect(await api.execute(key)).toEqual(json(overHttp.body))
    }
    expect(await api.execute("optional")).toEqual({ region: "all" })
    expect(await api.execute("nothing")).toEqual({ input: "none" })
    await expect(api.execute("required")).rejects.toMatchObject({ status: 400, details: { issues: [{ path: ["region"], message: "is required" }] } })
  })

  it("execute() throws a ServeHttpError carrying status, type, message and details", async () => {
    const api = makeApi()
    const failure = await api.execute("revenue", { input: {} as { region: string } }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ServeHttpError)
    const error = failure as ServeHttpError
    expect(error.status).toBe(400)
    expect(error.type).toBe("VALIDATION_ERROR")
    expect(error.message).toBe("Input failed validation")
    expect(error.details).toEqual({ issues: [{ path: ["region"], message: "is required" }] })
  })

  it("execute() takes context values and a caller, and a request whose headers strategies see", async () => {
    const api = defineServe({
      auth: ({ request }) => (request.headers?.["x-key"] === "k1" ? { id: "from-header" } : null),
      queries: { whoami: ({ ctx }: { ctx: { auth: { id?: unknown } | null; extra?: unknown } }) => ({ id: ctx.auth?.id, extra: ctx.extra }) }
    })
    await expect(api.execute("whoami", { context: { auth: { id: "trusted" }, extra: 1 } })).resolves.toEqual({ id: "trusted", extra: 1 })
    await expect(api.execute("whoami", { request: { headers: { "x-key": "k1" } } })).resolves.toEqual({ id: "from-header" })
    await expect(api.execute("whoami")).rejects.toMatchObject({ status: 401, type: "UNAUTHORIZED" })
  })

  it("describe() lists key, path, method and metadata of every route", () => {
    const api = defineServe({
      queries: {
        revenue: {
          name: "Revenue",
          method: "POST",
          summary: "Weekly revenue",
          description: "Revenue per region",
          tags: ["finance"],
          cacheTtlMs: 60_000,
          requiredRoles: ["analyst"],
          custom: { owner: "data-team" },
          query: () => 1
        }
      }
    })
    expect(api.describe()).toEqual([
      expect.objectContaining({
        key: "revenue",
        name: "Revenue",
        path: "/api/analytics/revenue",
        method: "POST",
        summary: "Weekly revenue",
        description: "Revenue per region",
        tags: ["finance"],
        cacheTtlMs: 60_000,
        requiresAuth: true,
        requiredRoles: ["analyst"],
        custom: { owner: "data-team" }
      })
    ])
  })

  it("queryLogger: on() returns an unsubscribe, listenerCount and removeAll() track listeners", async () => {
    const api = makeApi()
    expect(api.queryLogger.listenerCount).toBe(0)
    const seen: Array<ServeQueryEvent> = []
    const off = api.queryLogger.on((event) => seen.push(event))
    api.queryLogger.on(() => undefined)
    expect(api.queryLogger.listenerCount).toBe(2)
    await api.handler(get("/api/analytics/revenue", { region: "eu" }, { "x-request-id": "req-1" }))
    expect(seen.map((event) => event.status)).toEqual(["started", "completed"])
    const completed = seen[1]!
    expect(completed).toMatchObject({
      requestId: "req-1",
      endpointKey: "revenue",
      path: "/api/analytics/revenue",
      method: "GET",
      status: "completed",
      input: { region: "eu" },
      responseStatus: 200,
      result: { region: "eu", total: 42 }
    })
    expect(completed.endTime! - completed.startTime).toBeGreaterThanOrEqual(0)
    expect(completed.durationMs).toBeGreaterThanOrEqual(0)
    off()
    expect(api.queryLogger.listenerCount).toBe(1)
    api.queryLogger.removeAll()
    expect(api.queryLogger.listenerCount).toBe(0)
  })

  it("queryLogger reports failures as error events with the response status and the error", async () => {
    const api = makeApi()
    const seen: Array<ServeQueryEvent> = []
    api.queryLogger.on((event) => seen.push(event))
    await api.handler(get("/api/analytics/revenue"))
    expect(seen[1]).toMatchObject({ status: "error", responseStatus: 400, endpointKey: "revenue" })
    expect(seen[1]!.error).toBeInstanceOf(Error)
    expect(seen[1]!.result).toBeUndefined()
  })

  it("start() serves over HTTP and stop() closes the server", async () => {
    const api = makeApi()
    const server = await api.start({ port: 0, hostname: "127.0.0.1" })
    try {
      const response = await fetch(`${server.url}/api/analytics/revenue?region=eu`)
      expect(response.status).toBe(200)
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      expect(await response.json()).toEqual({ region: "eu", total: 42 })
    } finally {
      await server.stop()
    }
    await expect(fetch(`${server.url}/api/analytics/ping`)).rejects.toThrow()
  })
})
