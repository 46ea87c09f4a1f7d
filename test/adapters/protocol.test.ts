/**
 * Regressions found by the fuzzer: what node:http used to answer itself (bare status lines without
 * the envelope or a request id, a closed socket for CONNECT, 417 for an unknown Expect), responses
 * node:http refused (which threw out of the listener and ended the process), and JSON nested deep
 * enough to overflow a validator's stack (a 500).
 */
import { Schema } from "effect"
import { defineServe, type RunningServer, ServeHttpError, startNodeServer } from "queryserve"
import { connect } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest"
import { exchange, header, type RawResponse } from "../reliability/support/rawClient.js"

const api = defineServe({
  queries: {
    ping: () => ({ pong: true }),
    echo: { method: "POST", inputSchema: Schema.Struct({ from: Schema.String }), query: ({ input }: { input: unknown }) => input },
    newlineHeader: ({ ctx }: { ctx: { setHeader(name: string, value: string): void } }) => {
      ctx.setHeader("x-note", "first line\r\nset-cookie: injected=1")
      return 1
    },
    euroHeaderLater: async ({ ctx }: { ctx: { setHeader(name: string, value: string): void } }) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      ctx.setHeader("x-price", "10 €")
      return 1
    },
    statusOutOfRange: () => {
      throw new ServeHttpError(99, "VALIDATION_ERROR", "not a status")
    }
  }
})

let server: RunningServer
beforeAll(async () => {
  // Without the safety net, so that the last describe sees only its own servers install it.
  server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, handleUncaughtErrors: false })
})
afterAll(() => server.stop())

const send = async (request: string): Promise<RawResponse> => {
  const outcome = await exchange(server.port, request, { headRequest: false, timeoutMs: 5_000 })
  if (!outcome.answered) throw new Error(`no answer (${outcome.reason}): ${outcome.received}`)
  return outcome.response
}

const get = (path: string, headers = ""): Promise<RawResponse> => send(`GET /api/analytics/${path} HTTP/1.1\r\nHost: t\r\n${headers}\r\n`)

const expectEnvelope = (response: RawResponse, status: number, type: string, message?: string | RegExp): void => {
  expect(response.status).toBe(status)
  expect(header(response, "content-type")).toBe("application/json; charset=utf-8")
  expect(header(response, "x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  const { error } = JSON.parse(response.body) as { error: { type: string; message: string } }
  expect(error.type).toBe(type)
  if (message !== undefined) expect(error.message).toMatch(message)
}

describe("requests node:http refuses before any listener runs get the envelope and a request id", () => {
  it("a malformed request: 400 VALIDATION_ERROR naming the parser's complaint, then the connection closes", async () => {
    const response = await send("G E T /api/analytics/ping HTTP/1.1\r\nHost: t\r\n\r\n")
    expectEnvelope(response, 400, "VALIDATION_ERROR", "The request is not valid HTTP/1.1")
    expect(header(response, "connection")).toBe("close")
    expect(JSON.parse(response.body).error.details.issues[0].message).toBe("Invalid method encountered")
  })

  it("a bare LF or a control character in a header value: 400", async () => {
    expectEnvelope(await get("ping", "X-Request-Id: a\nb: c\r\n"), 400, "VALIDATION_ERROR")
    expectEnvelope(await get("ping", "Origin: http://a\x7fb\r\n"), 400, "VALIDATION_ERROR")
  })

  it("a bad header followed by a large body: the 400 reaches the client, not a reset", async () => {
    // node:http reports each later chunk of the refused request as a new client error; the second report
    // destroyed the socket with input unread, and the reset could discard the 400 before the client read it
    // (found by the fuzzer: a NUL in X-Request-Id, then a 750 KB body).
    const body = "x".repeat(16 * 1024 * 1024)
    const head = `POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nX-Request-Id: a\x00b\r\nContent-Length: ${body.length}\r\n\r\n`
    const outcome = await new Promise<{ received: string; error?: string }>((resolve) => {
      const socket = connect(server.port, "127.0.0.1")
      let received = ""
      socket.setEncoding("latin1")
      socket.on("connect", () => {
        socket.write(head)
        socket.end(body)
      })
      socket.on("data", (chunk: string) => (received += chunk))
      socket.on("error", (error: NodeJS.ErrnoException) => resolve({ received, error: error.code ?? "error" }))
      socket.on("close", () => resolve({ received }))
    })
    expect(outcome.error).toBeUndefined()
    expect(outcome.received).toMatch(/^HTTP\/1\.1 400 /)
    expect(outcome.received).toContain('"type":"VALIDATION_ERROR"')
  })

  it("headers over 16 KiB: 431 PAYLOAD_TOO_LARGE with the limit", async () => {
    const response = await get("ping", `X-Filler: ${"f".repeat(20_000)}\r\n`)
    expectEnvelope(response, 431, "PAYLOAD_TOO_LARGE", "The request headers exceed the limit of 16384 bytes")
    expect(JSON.parse(response.body).error.details).toEqual({ limitBytes: 16_384 })
  })

  it("an HTTP/1.1 request without Host: 400; HTTP/1.0 needs none", async () => {
    const response = await send("GET /api/analytics/ping HTTP/1.1\r\nX-Request-Id: no-host-1\r\n\r\n")
    expect(response.status).toBe(400)
    expect(header(response, "x-request-id")).toBe("no-host-1")
    expect(JSON.parse(response.body).error).toMatchObject({ type: "VALIDATION_ERROR", details: { issues: [{ path: ["headers", "host"] }] } })
    expect((await send("GET /api/analytics/ping HTTP/1.0\r\n\r\n")).status).toBe(200)
  })

  it("headers not received within headersTimeout: 408 VALIDATION_ERROR", async () => {
    const slow = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, handleUncaughtErrors: false, headersTimeout: 200 })
    try {
      const outcome = await exchange(slow.port, "GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\n", { headRequest: false, timeoutMs: 5_000 })
      expect(outcome.answered).toBe(true)
      if (outcome.answered) expectEnvelope(outcome.response, 408, "VALIDATION_ERROR", "The request was not received in time")
    } finally {
      await slow.stop()
    }
  })

  it("CONNECT: 404 NOT_FOUND instead of a dropped connection", async () => {
    const response = await send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
    expectEnvelope(response, 404, "NOT_FOUND", "No route for CONNECT example.com:443")
  })

  it("an Expect other than 100-continue is ignored (RFC 9110 allows it) instead of 417", async () => {
    const response = await get("ping", "Expect: tea\r\n")
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body)).toEqual({ pong: true })
  })
})

describe("responses node:http refuses are a 500, not a crash", () => {
  let logged: MockInstance<typeof console.error>
  beforeAll(() => {
    logged = vi.spyOn(console, "error").mockImplementation(() => {})
  })
  afterEach(() => {
    expect(logged).toHaveBeenCalledWith("[queryserve] node:http refused the response; answering 500 instead", expect.any(Error))
    logged.mockClear()
  })
  afterAll(() => logged.mockRestore())

  it("a CR LF in a header a handler set (synchronous path)", async () => {
    const response = await get("newlineHeader")
    expectEnvelope(response, 500, "INTERNAL_SERVER_ERROR", "An unexpected error occurred")
    expect(response.headers.has("set-cookie")).toBe(false)
  })

  it("a header value beyond latin1 set after an await (asynchronous path)", async () => {
    expectEnvelope(await get("euroHeaderLater"), 500, "INTERNAL_SERVER_ERROR", "An unexpected error occurred")
  })
})

describe("ServeHttpError statuses", () => {
  it("only an error status (400–599) makes one: another is a RangeError where it is thrown, answered 500 like any bug", async () => {
    for (const status of [99, 101, 204, 304, 600, 700, 404.5]) {
      expect(() => new ServeHttpError(status, "VALIDATION_ERROR", "not an error status")).toThrow(RangeError)
    }
    expect(new ServeHttpError(418, "TEAPOT", "short and stout").status).toBe(418)
    expectEnvelope(await get("statusOutOfRange"), 500, "INTERNAL_SERVER_ERROR", "An unexpected error occurred")
    expect((await get("ping")).status).toBe(200)
  })
})

describe("JSON nesting", () => {
  const post = (body: string) =>
    send(`POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
  const nested = (depth: number) => `{"from":${"[".repeat(depth)}${"]".repeat(depth)}}`

  it("a body 10,000 levels deep is a 400, not a validator's stack overflow (500)", async () => {
    const response = await post(nested(10_000))
    expectEnvelope(response, 400, "VALIDATION_ERROR", "Request body is nested too deeply")
    // With a prototype key too (JSON.parse then runs its reviver, which recurses as well).
    expectEnvelope(await post(`{"__proto__":{},"x":${nested(10_000)}}`), 400, "VALIDATION_ERROR", "Request body is nested too deeply")
  })

  it("512 levels are validated as usual; brackets inside strings do not count", async () => {
    expectEnvelope(await post(nested(511)), 400, "VALIDATION_ERROR", "Input failed validation")
    const response = await post(JSON.stringify({ from: "[".repeat(5_000) }))
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body)).toEqual({ from: "[".repeat(5_000) })
  })
})

describe("the process-level safety net", () => {
  const listeners = () => [process.listenerCount("uncaughtException"), process.listenerCount("unhandledRejection")]

  it("is installed once for all running servers and removed with the last one", async () => {
    const before = listeners()
    const servers = await Promise.all([1, 2].map(() => startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1", handleSignals: false })))
    expect(listeners()).toEqual(before.map((n) => n + 1))
    await servers[0]!.stop()
    expect(listeners()).toEqual(before.map((n) => n + 1))
    await servers[1]!.stop()
    expect(listeners()).toEqual(before)
  })

  it("is not installed with handleUncaughtErrors: false", async () => {
    const before = listeners()
    const quiet = await startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1", handleSignals: false, handleUncaughtErrors: false })
    expect(listeners()).toEqual(before)
    await quiet.stop()
  })
})
