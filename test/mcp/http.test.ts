import { Schema } from "effect"
import { apiKeyAuth, defineServe, formatQueryEvent, formatQueryEventJSON, type ServeLifecycleHooks, type ServeQueryEvent } from "queryserve"
import { describe, expect, it, vi } from "vitest"
import { connectClient, fetchTarget, KEYS, keyHeader, makeApi, MCP, mcpPost, rpc, STREAMABLE } from "./support/api.js"

describe("the MCP endpoint over HTTP", () => {
  it("answers 401 without credentials before any MCP message is handled", async () => {
    const { api, events, calls } = makeApi()
    const call = rpc("tools/call", { name: "orders", arguments: {} })
    const missing = await mcpPost(api.handler, call)
    expect(missing.status).toBe(401)
    expect(missing.json).toEqual({ error: { type: "UNAUTHORIZED", message: "Authentication required", details: { reason: "missing_credentials" } } })
    const invalid = await mcpPost(api.handler, call, keyHeader("not-a-key"))
    expect(invalid.status).toBe(401)
    expect(invalid.json.error.details).toEqual({ reason: "invalid_credentials" })
    expect(calls.orders).toBe(0)
    expect(events).toEqual([])
    // The SDK's own client is refused at initialization.
    await expect(connectClient(fetchTarget(api), {})).rejects.toThrow(/"reason":"missing_credentials"/)
  })

  it("tells onAuthFailure of its 401s, as $mcp", async () => {
    const onAuthFailure = vi.fn<NonNullable<ServeLifecycleHooks["onAuthFailure"]>>()
    const api = defineServe({
      queries: { orders: () => [] },
      auth: apiKeyAuth({ header: "x-api-key", keys: { "good-key": { roles: [] } } }),
      mcp: true,
      hooks: { onAuthFailure }
    })
    await mcpPost(api.handler, rpc("tools/list"))
    await mcpPost(api.handler, rpc("tools/list"), keyHeader("not-a-key"))
    expect(onAuthFailure.mock.calls.map(([event]) => [event.queryKey, event.reason])).toEqual([
      ["$mcp", "missing_credentials"],
      ["$mcp", "invalid_credentials"]
    ])
    expect((await mcpPost(api.handler, rpc("tools/list"), keyHeader("good-key"))).status).toBe(200)
    expect(onAuthFailure).toHaveBeenCalledTimes(2)
    await api.dispose()
  })

  it("answers GET and DELETE with 405: a stateless server opens no stream and ends no session", async () => {
    const { api } = makeApi()
    // Like the docs routes, the MCP endpoint is not an operation of the OpenAPI document.
    expect(api.describe().map((endpoint) => endpoint.path)).not.toContain(MCP)
    for (const method of ["GET", "DELETE"]) {
      const response = await api.handler({ method, path: MCP, headers: { accept: "text/event-stream", ...keyHeader(KEYS.acme) } })
      expect(response.status).toBe(405)
      expect(response.headers.allow).toBe("POST")
    }
  })

  it("answers initialize without a session id, and follows the Streamable HTTP rules of the SDK's transport", async () => {
    const { api } = makeApi()
    const key = keyHeader(KEYS.acme)
    const init = await mcpPost(api.handler, rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }), key)
    expect(init.status).toBe(200)
    expect(init.headers["mcp-session-id"]).toBeUndefined()
    expect(init.json.result).toMatchObject({ protocolVersion: "2025-11-25", serverInfo: { name: "orders-api", version: "2.1.0" } })
    // A notification is accepted with 202 and no body; a batch gets an array.
    const notified = await mcpPost(api.handler, rpc("notifications/initialized", undefined, null), key)
    expect([notified.status, notified.body]).toEqual([202, null])
    const batch = await mcpPost(api.handler, [rpc("ping", undefined, 1), rpc("tools/call", { name: "version" }, 2)], key)
    expect(batch.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: '"2.1.0"' }] } }
    ])
    // What the transport refuses: not JSON, an Accept without SSE, an unknown protocol version.
    expect((await mcpPost(api.handler, "{oops", key)).json.error.code).toBe(-32700)
    expect((await mcpPost(api.handler, rpc("ping"), { ...key, accept: "application/json" })).status).toBe(406)
    expect((await mcpPost(api.handler, rpc("ping"), { ...key, "mcp-protocol-version": "1999-01-01" })).status).toBe(400)
    expect((await mcpPost(api.handler, rpc("resources/list"), key)).json.error).toEqual({ code: -32601, message: "Method not found" })
  })

  it("answers a single request directly with the JSON-RPC response the SDK's transport gives", async () => {
    const { api } = makeApi()
    const response = await mcpPost(api.handler, rpc("tools/call", { name: "total", arguments: {} }, 7), {
      ...keyHeader(KEYS.globex),
      "mcp-protocol-version": "2025-06-18"
    })
    expect(response.status).toBe(200)
    expect(response.headers["content-type"]).toBe("application/json")
    expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(response.json).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        content: [{ type: "text", text: '{"tenant":"globex","amount":1065}' }],
        structuredContent: { tenant: "globex", amount: 1065 }
      }
    })
  })

  it("answers malformed tools/call parameters with -32602, and takes requests with _meta or string ids like any other", async () => {
    const { api } = makeApi()
    const key = keyHeader(KEYS.globex)
    for (const params of [{ arguments: {} }, { name: 7 }, { name: "total", arguments: [1] }, { name: "total", arguments: "x" }]) {
      const answer = await mcpPost(api.handler, rpc("tools/call", params, 3), key)
      expect(answer.status).toBe(200)
      expect(answer.json).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: expect.stringMatching(/Invalid tools\/call request/) } })
    }
    const expected = { content: [{ type: "text", text: '{"tenant":"globex","amount":1065}' }], structuredContent: { tenant: "globex", amount: 1065 } }
    const withMeta = await mcpPost(api.handler, rpc("tools/call", { name: "total", arguments: {}, _meta: { progressToken: "p" } }, "call-1"), key)
    expect(withMeta.json).toEqual({ jsonrpc: "2.0", id: "call-1", result: expected })
    // Not a JSON-RPC request (a fractional id): the SDK's transport refuses it.
    expect((await mcpPost(api.handler, rpc("tools/call", { name: "total" }, 1.5), key)).json.error.code).toBe(-32700)
  })

  it("refuses browser pages of foreign origins (DNS rebinding), unless CORS allows them or both sides are loopback", async () => {
    const { api } = makeApi()
    const key = keyHeader(KEYS.acme)
    const rebound = await mcpPost(api.handler, rpc("ping"), { ...key, host: "evil.example:4000", origin: "http://evil.example:4000" })
    expect(rebound.status).toBe(403)
    expect(rebound.json.error).toMatchObject({ type: "FORBIDDEN", details: { reason: "origin_not_allowed" } })
    const local = await mcpPost(api.handler, rpc("ping"), { ...key, host: "127.0.0.1:4000", origin: "http://localhost:5173" })
    expect(local.status).toBe(200)
    const withCors = defineServe({ mcp: true, cors: { origin: ["https://app.example"] }, queries: { ping: () => "pong" } })
    const allowed = await mcpPost(withCors.handler, rpc("ping"), { host: "api.example", origin: "https://app.example" })
    expect(allowed.status).toBe(200)
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example")
    expect((await mcpPost(withCors.handler, rpc("ping"), { host: "api.example", origin: "https://other.example" })).status).toBe(403)
  })

  it("is open without global strategies; an endpoint's own strategy decides whether its tool is listed", async () => {
    const api = defineServe({
      mcp: true,
      queries: {
        open: () => "open",
        keyed: { auth: apiKeyAuth({ header: "x-team-key", keys: { team: { roles: [] } } }), query: () => "team" }
      }
    })
    const list = async (headers: Record<string, string>) =>
      (await mcpPost(api.handler, rpc("tools/list"), headers)).json.result.tools.map((tool: { name: string }) => tool.name)
    expect(await list({})).toEqual(["open"])
    expect(await list({ "x-team-key": "team" })).toEqual(["open", "keyed"])
    expect(await list({ "x-team-key": "wrong" })).toEqual(["open"])
    const refused = await mcpPost(api.handler, rpc("tools/call", { name: "keyed" }), { "x-team-key": "wrong" })
    expect(JSON.parse(refused.json.result.content[0].text).error.details).toEqual({ reason: "invalid_credentials" })
    const served = await mcpPost(api.handler, rpc("tools/call", { name: "keyed" }), { "x-team-key": "team" })
    expect(served.json.result.content).toEqual([{ type: "text", text: '"team"' }])
  })

  // A global strategy is told which endpoint it authenticates for: over MCP that is each tool's, as
  // over the tool's HTTP route, not only the MCP endpoint's own.
  it("runs the global strategies for each tool with that tool's endpoint: a key one endpoint refuses is refused through its tool", async () => {
    const seen: Array<string> = []
    const api = defineServe({
      mcp: true,
      auth: ({ request, endpoint }) => {
        seen.push(endpoint.key)
        const key = request.headers?.["x-api-key"]
        if (key === "admin") return { userId: "admin", roles: [] }
        return key === "viewer" && endpoint.key !== "payroll" ? { userId: "viewer", roles: [] } : null
      },
      queries: { revenue: () => "revenue", payroll: () => "payroll" }
    })
    const headers = (key: string) => ({ "x-api-key": key })
    const http = await api.handler({ method: "GET", path: "/api/analytics/payroll", headers: headers("viewer") })
    expect(http.status).toBe(401)
    const list = async (key: string) =>
      (await mcpPost(api.handler, rpc("tools/list"), headers(key))).json.result.tools.map((tool: { name: string }) => tool.name)
    expect(await list("viewer")).toEqual(["revenue"])
    expect(await list("admin")).toEqual(["revenue", "payroll"])
    seen.length = 0
    const refused = await mcpPost(api.handler, rpc("tools/call", { name: "payroll" }), headers("viewer"))
    expect(refused.json.result.isError).toBe(true)
    // The same envelope as the route's own 401.
    const { requestId: _http, ...overHttp } = JSON.parse(http.body!).error
    const { requestId: _tool, ...overMcp } = JSON.parse(refused.json.result.content[0].text).error
    expect(overMcp).toEqual(overHttp)
    expect(overMcp.type).toBe("UNAUTHORIZED")
    expect(seen).toEqual(["$mcp", "payroll"])
    const served = await mcpPost(api.handler, rpc("tools/call", { name: "payroll" }), headers("admin"))
    expect(served.json.result.content).toEqual([{ type: "text", text: '"payroll"' }])
    expect((await mcpPost(api.handler, rpc("tools/call", { name: "revenue" }), headers("viewer"))).json.result.content)
      .toEqual([{ type: "text", text: '"revenue"' }])
  })

  it("names tools by key (other characters become _), wraps an input that admits no object as `input`, and adds no tool for extra routes", async () => {
    const api = defineServe({
      mcp: { path: "/agents" },
      basePath: "/v1",
      queries: {
        "reports/daily": () => "daily",
        sum: { method: "POST", inputSchema: Schema.Array(Schema.Number), query: ({ input }: { input: ReadonlyArray<number> }) => input.reduce((a, b) => a + b, 0) },
        big: () => ({ rows: 12345678901234567890n, small: 3n }),
        // Effect's `{}` admits objects and arrays: arguments (an object) fit it as they are.
        none: { inputSchema: Schema.Struct({}), query: () => "none" },
        // No input at all (it refuses {}): no arguments reach it as undefined, as an empty query string does.
        nothing: { inputSchema: Schema.Undefined, query: ({ input }: { input: undefined }) => ({ given: input === undefined ? "nothing" : "something" }) }
      }
    }).route("/total", "sum")
    const post = async (body: unknown) =>
      (await api.handler({ method: "POST", path: "/v1/agents", headers: STREAMABLE, body: JSON.stringify(body) })) as { body: string }
    const tools = JSON.parse((await post(rpc("tools/list"))).body).result.tools
    expect(tools.map((tool: { name: string }) => tool.name)).toEqual(["reports_daily", "sum", "big", "none", "nothing"])
    expect(tools[1].inputSchema).toEqual({ type: "object", properties: { input: { type: "array", items: { type: "number" } } }, required: ["input"] })
    expect(tools[3].inputSchema).toEqual({ type: "object", anyOf: [{ type: "object" }, { type: "array" }] })
    expect(JSON.parse((await post(rpc("tools/call", { name: "none" }))).body).result.content).toEqual([{ type: "text", text: '"none"' }])
    for (const params of [{ name: "nothing" }, { name: "nothing", arguments: {} }]) {
      expect(JSON.parse((await post(rpc("tools/call", params))).body).result.content).toEqual([{ type: "text", text: '{"given":"nothing"}' }])
    }
    const sum = JSON.parse((await post(rpc("tools/call", { name: "sum", arguments: { input: [1, 2, 3] } }))).body).result
    expect(sum.content).toEqual([{ type: "text", text: "6" }])
    const daily = JSON.parse((await post(rpc("tools/call", { name: "reports_daily" }))).body).result
    expect(daily.content).toEqual([{ type: "text", text: '"daily"' }])
    // BigInt from a SQL driver reads as it does over HTTP.
    const big = JSON.parse((await post(rpc("tools/call", { name: "big" }))).body).result
    expect(big.content).toEqual([{ type: "text", text: '{"rows":"12345678901234567890","small":3}' }])
  })

  it("marks a tool call's log lines: `[mcp]` in text, `transport` in JSON; an HTTP line is unchanged", () => {
    const event: ServeQueryEvent = {
      requestId: "r1",
      endpointKey: "orders",
      path: "/api/analytics/orders",
      method: "GET",
      status: "completed",
      startTime: Date.UTC(2026, 0, 1),
      endTime: Date.UTC(2026, 0, 1) + 12,
      durationMs: 12,
      responseStatus: 200,
      transport: "mcp"
    }
    expect(formatQueryEvent(event)).toBe("✓ GET /api/analytics/orders → 200 (12ms) [mcp]")
    expect(formatQueryEvent({ ...event, status: "error", responseStatus: 403, error: new Error("No") })).toBe(
      "✗ GET /api/analytics/orders → 403 (12ms) [mcp] - No"
    )
    expect(JSON.parse(formatQueryEventJSON(event)!)).toMatchObject({ endpoint: "orders", status: 200, transport: "mcp" })
    expect(formatQueryEvent({ ...event, transport: "http" })).toBe("✓ GET /api/analytics/orders → 200 (12ms)")
    expect(JSON.parse(formatQueryEventJSON({ ...event, transport: "http" })!)).not.toHaveProperty("transport")
  })

  it("fails a tool whose result has no JSON text as its HTTP request fails: the 500 envelope, an error event, no message of the cause", async () => {
    const events: Array<ServeQueryEvent> = []
    const api = defineServe({
      mcp: true,
      queryLogging: (event) => events.push(event),
      queries: {
        aFunction: () => () => 1,
        toJsonThrows: () => ({
          toJSON: () => {
            throw new Error("password=hunter2")
          }
        })
      }
    })
    for (const name of ["aFunction", "toJsonThrows"]) {
      const response = await mcpPost(api.handler, rpc("tools/call", { name }))
      expect(response.body).not.toContain("hunter2")
      expect(response.json.result).toEqual({
        content: [{ type: "text", text: '{"error":{"type":"INTERNAL_SERVER_ERROR","message":"An unexpected error occurred"}}' }],
        isError: true
      })
    }
    expect(events.filter((event) => event.status !== "started").map((event) => [event.endpointKey, event.status, event.responseStatus, event.transport]))
      .toEqual([["aFunction", "error", 500, "mcp"], ["toJsonThrows", "error", 500, "mcp"]])
  })

  it("counts tool calls in the metrics, under the endpoint, like its HTTP requests", async () => {
    const api = defineServe({ mcp: true, metrics: { public: true }, queries: { ping: () => "pong" } })
    await mcpPost(api.handler, rpc("tools/call", { name: "ping" }))
    await api.handler({ method: "GET", path: "/api/analytics/ping", headers: {} })
    const scrape = await api.handler({ method: "GET", path: "/api/analytics/metrics", headers: {} })
    expect(scrape.body).toMatch(/^queryserve_requests_total\{endpoint="ping",method="GET",status="200"\} 2$/m)
    await api.dispose()
  })
  it("fails a tool call still running when the request's deadline passes: an isError timeout, counted as a 504, nothing left in flight", async () => {
    const api = defineServe({
      mcp: true,
      metrics: { public: true },
      queries: {
        ping: () => "pong",
        hang: () => new Promise<never>(() => {}),
        slow: () => new Promise((resolve) => setTimeout(() => resolve({ late: true }), 400))
      }
    })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", requestTimeout: 150, handleSignals: false })
    try {
      const call = (message: ReturnType<typeof rpc>) =>
        fetch(`${server.url}${MCP}`, { method: "POST", headers: STREAMABLE, body: JSON.stringify(message) }).then(async (r) => ({ status: r.status, json: await r.json() }))
      // A first call loads the MCP SDK, so that the timed calls below are answered within their deadline.
      expect((await call(rpc("tools/call", { name: "ping" }))).status).toBe(200)
      for (const name of ["hang", "slow"]) {
        const answer = await call(rpc("tools/call", { name, arguments: {} }))
        expect(answer.status).toBe(200)
        expect(answer.json.result.isError).toBe(true)
        expect(JSON.parse(answer.json.result.content[0].text)).toMatchObject({ error: { type: "GATEWAY_TIMEOUT" } })
      }
      // The slow handler finishing later changes nothing: its call was answered, and counted, once.
      await new Promise((resolve) => setTimeout(resolve, 400))
      const scrape = await (await fetch(`${server.url}/api/analytics/metrics`)).text()
      expect(scrape).toMatch(/^queryserve_requests_total\{endpoint="hang",method="GET",status="504"\} 1$/m)
      expect(scrape).toMatch(/^queryserve_requests_total\{endpoint="slow",method="GET",status="504"\} 1$/m)
      expect(scrape).not.toMatch(/endpoint="slow",method="GET",status="200"/)
      expect(scrape).toMatch(/^queryserve_in_flight_requests 0$/m)
    } finally {
      await server.stop()
      await api.dispose()
    }
  })

  it("leaves AbortController as it was: a tool's handler, and code after the call, get working controllers and a real ctx.signal", async () => {
    const Original = globalThis.AbortController
    const seen: Array<{ controller: boolean; aborts: boolean; signal: boolean; signalAborted: boolean }> = []
    const api = defineServe({
      mcp: true,
      queries: {
        probe: ({ ctx }: { ctx: { signal: AbortSignal } }) => {
          const controller = new AbortController()
          controller.abort("stop")
          seen.push({
            controller: controller instanceof Original,
            aborts: controller.signal.aborted && controller.signal.reason === "stop",
            signal: ctx.signal instanceof AbortSignal,
            signalAborted: ctx.signal.aborted
          })
          return { ok: true }
        }
      }
    })
    // Twice: the second call takes the pooled Server, on the direct path.
    for (let i = 0; i < 2; i++) {
      const answer = await mcpPost(api.handler, rpc("tools/call", { name: "probe", arguments: {} }))
      expect(answer.json.result.content[0].text).toBe('{"ok":true}')
      expect(globalThis.AbortController).toBe(Original)
    }
    expect(seen).toEqual([0, 1].map(() => ({ controller: true, aborts: true, signal: true, signalAborted: false })))
    const after = new AbortController()
    after.abort()
    expect(after.signal.aborted).toBe(true)
    await api.dispose()
  })
})
