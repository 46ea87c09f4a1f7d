import { Effect, Schema } from "effect"
import { createFetchHandler, createNodeHandler, defineServe, type RunningServer, type ServeQueryEvent, toHttpApp } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openConnection, statusLines } from "../support/rawHttp.js"

const MiB = 1024 * 1024

describe("body limit", () => {
  const api = defineServe({
    queries: { echo: { method: "POST", query: ({ input }: { input: unknown }) => ({ bytes: JSON.stringify(input).length }) } }
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())
  const echoUrl = () => `${server.url}/api/analytics/echo`

  it("answers a 2 MiB body 413 PAYLOAD_TOO_LARGE", async () => {
    const response = await fetch(echoUrl(), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify("x".repeat(2 * MiB)) })
    expect(response.status).toBe(413)
    expect(response.headers.get("connection")).toBe("close")
    expect(response.headers.get("x-request-id")).toBeTruthy()
    expect(await response.json()).toEqual({
      error: { type: "PAYLOAD_TOO_LARGE", message: `The request body exceeds the limit of ${MiB} bytes`, details: { limitBytes: MiB } }
    })
  })

  it("refuses by Content-Length before a single body byte was sent, then closes the connection", async () => {
    const connection = await openConnection(server.port)
    connection.write(`POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${2 * MiB}\r\n\r\n`)
    const received = await connection.readUntil((text) => text.includes("PAYLOAD_TOO_LARGE"))
    expect(statusLines(received)).toEqual(["HTTP/1.1 413 Payload Too Large"])
    await connection.closed
  })

  it("refuses a chunked body without Content-Length once it passes the limit, without waiting for the rest", async () => {
    const connection = await openConnection(server.port)
    connection.write("POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    const chunk = "a".repeat(64 * 1024)
    // 1.5 MiB of chunks and no terminating chunk: the client is still "sending" when the answer comes.
    for (let i = 0; i < 24; i++) connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    const received = await connection.readUntil((text) => text.includes("PAYLOAD_TOO_LARGE"))
    expect(statusLines(received)).toEqual(["HTTP/1.1 413 Payload Too Large"])
    expect(received.toLowerCase()).toContain("connection: close")
    await connection.closed
  })

  it("refuses a 2 MiB streamed body sent by fetch", async () => {
    const piece = new TextEncoder().encode("b".repeat(64 * 1024))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 32; i++) controller.enqueue(piece)
        controller.close()
      }
    })
    const response = await fetch(echoUrl(), { method: "POST", body, duplex: "half" } as RequestInit)
    expect(response.status).toBe(413)
  })

  // A body that arrives in the read holding its head is taken from node:http's buffer; one that comes later through the stream's events.
  it("reads a body sent with its head, after its head, pipelined behind another, and split across reads, on one kept-alive connection", async () => {
    const connection = await openConnection(server.port)
    const post = (body: string) => `POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    const answers = (count: number) => connection.readUntil((text) => (text.match(/\{"bytes":\d+\}/g) ?? []).length === count)
    connection.write(post(`{"a":"${"x".repeat(10)}"}`))
    await answers(1)
    const late = `{"b":"${"y".repeat(20)}"}`
    connection.write(post(late).slice(0, -late.length))
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.write(late)
    await answers(2)
    connection.write(post(`[${"1,".repeat(29)}1]`) + post('"z"'))
    await answers(4)
    // Part of the body with the head, the rest later: the part already buffered is read with the rest.
    const split = post(`{"c":"${"w".repeat(30)}"}`)
    connection.write(split.slice(0, -12))
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.write(split.slice(-12))
    const received = await answers(5)
    expect(statusLines(received)).toEqual(Array(5).fill("HTTP/1.1 200 OK"))
    expect(received.match(/\{"bytes":\d+\}/g)).toEqual(['{"bytes":18}', '{"bytes":28}', '{"bytes":61}', '{"bytes":3}', '{"bytes":38}'])
    connection.destroy()
  })

  it("refuses a chunked body over the limit that arrived whole with its head", async () => {
    const small = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, bodyLimit: 100 })
    try {
      const connection = await openConnection(small.port)
      const chunk = `"${"e".repeat(150)}"`
      connection.write(`POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`)
      const received = await connection.readUntil((text) => text.includes("PAYLOAD_TOO_LARGE"))
      expect(statusLines(received)).toEqual(["HTTP/1.1 413 Payload Too Large"])
      await connection.closed
    } finally {
      await small.stop()
    }
  })

  it("accepts a body just under the limit, and honours a custom bodyLimit", async () => {
    const text = JSON.stringify("c".repeat(MiB - 16))
    const ok = await fetch(echoUrl(), { method: "POST", headers: { "content-type": "application/json" }, body: text })
    expect(ok.status).toBe(200)
    const small = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, bodyLimit: 100 })
    try {
      const refused = await fetch(`${small.url}/api/analytics/echo`, { method: "POST", body: JSON.stringify("d".repeat(200)) })
      expect(refused.status).toBe(413)
      expect((await refused.json()).error.details).toEqual({ limitBytes: 100 })
    } finally {
      await small.stop()
    }
  })
})

describe("request timeout", () => {
  const seen = { promiseAborted: false, reason: undefined as unknown, effectInterrupted: false }
  const events: Array<ServeQueryEvent> = []
  const api = defineServe({
    queries: {
      watchesSignal: ({ ctx }: { ctx: { signal: AbortSignal } }) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            seen.promiseAborted = ctx.signal.aborted
            seen.reason = ctx.signal.reason
            resolve("too late")
          })
        ),
      ignoresSignal: () => new Promise(() => {}),
      effectNever: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (seen.effectInterrupted = true)))),
      quick: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 20))
    }
  })
  api.queryLogger.on((event) => events.push(event))
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, requestTimeout: 300 })
  })
  afterAll(() => server.stop())
  const get = (key: string) => fetch(`${server.url}/api/analytics/${key}`, { headers: { "x-request-id": `t-${key}` } })

  it("answers 504 GATEWAY_TIMEOUT and aborts the handler's ctx.signal", async () => {
    const started = performance.now()
    const response = await get("watchesSignal")
    const elapsed = performance.now() - started
    expect(response.status).toBe(504)
    expect(response.headers.get("x-request-id")).toBe("t-watchesSignal")
    expect(await response.json()).toEqual({
      error: { type: "GATEWAY_TIMEOUT", message: "The request did not complete within 300 ms", details: { timeoutMs: 300 } }
    })
    expect(elapsed).toBeGreaterThanOrEqual(290)
    expect(seen.promiseAborted).toBe(true)
    expect((seen.reason as { _tag?: string })._tag).toBe("GatewayTimeout")
    const failed = events.find((event) => event.requestId === "t-watchesSignal" && event.status === "error")
    expect(failed?.responseStatus).toBe(504)
  })

  it("answers 504 even when the handler never looks at the signal", async () => {
    const response = await get("ignoresSignal")
    expect(response.status).toBe(504)
  })

  it("interrupts an Effect handler", async () => {
    const response = await get("effectNever")
    expect(response.status).toBe(504)
    await expect.poll(() => seen.effectInterrupted).toBe(true)
  })

  it("lets a handler that finishes in time answer normally", async () => {
    const response = await get("quick")
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true })
  })
})

describe("client address", () => {
  const api = defineServe({
    queries: { whoami: ({ ctx }: { ctx: { request: { remoteAddress?: string } } }) => ({ address: ctx.request.remoteAddress }) }
  })

  it("is the socket's address; with trustProxy the x-forwarded-for entry each trusted proxy appended", async () => {
    const plain = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    const oneProxy = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, trustProxy: true })
    const twoProxies = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, trustProxy: 2 })
    try {
      // The client wrote "198.51.100.66" itself; the trusted proxies appended the two on the right.
      const headers = { "x-forwarded-for": "198.51.100.66, 203.0.113.7, 10.0.0.1" }
      const direct = await (await fetch(`${plain.url}/api/analytics/whoami`, { headers })).json()
      expect(direct).toEqual({ address: "127.0.0.1" })
      expect(await (await fetch(`${oneProxy.url}/api/analytics/whoami`, { headers })).json()).toEqual({ address: "10.0.0.1" })
      expect(await (await fetch(`${twoProxies.url}/api/analytics/whoami`, { headers })).json()).toEqual({ address: "203.0.113.7" })
      const withoutHeader = await (await fetch(`${oneProxy.url}/api/analytics/whoami`)).json()
      expect(withoutHeader).toEqual({ address: "127.0.0.1" })
    } finally {
      await Promise.all([plain.stop(), oneProxy.stop(), twoProxies.stop()])
    }
  })
})

describe("slow clients", () => {
  it("closes a connection whose headers do not arrive within headersTimeout", async () => {
    const api = defineServe({ queries: { ping: () => "pong" } })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, headersTimeout: 400 })
    try {
      const connection = await openConnection(server.port)
      connection.write("GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\n")
      const received = await connection.readUntil((text) => text.length > 0, 5_000)
      expect(statusLines(received)).toEqual(["HTTP/1.1 408 Request Timeout"])
      await connection.closed
    } finally {
      await server.stop()
    }
  })
})

describe("listening address", () => {
  it("comes from PORT and HOST when the options leave it out", async () => {
    const saved = { PORT: process.env.PORT, HOST: process.env.HOST }
    process.env.PORT = "0"
    process.env.HOST = "127.0.0.1"
    try {
      const server = await defineServe({ queries: { ping: () => "pong" } }).start({ handleSignals: false })
      try {
        expect(server.hostname).toBe("127.0.0.1")
        expect(server.port).toBeGreaterThan(0)
        expect(server.url).toBe(`http://127.0.0.1:${server.port}`)
        expect(await (await fetch(`${server.url}/api/analytics/ping`)).json()).toBe("pong")
      } finally {
        await server.stop()
      }
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})

// Each of these, read from an environment variable that is not set (`Number(undefined)` is NaN), used
// to switch a protection off or make a timer fire at once; each adapter now refuses it up front.
describe("options that could not work", () => {
  const api = defineServe({ queries: { ping: () => "pong" } })

  it.each([
    ["bodyLimit", { bodyLimit: Number.NaN }, /bodyLimit must be a number of bytes, 0 or more .* not NaN/],
    ["bodyLimit", { bodyLimit: -1 }, /bodyLimit must be .* not -1/],
    ["requestTimeout", { requestTimeout: Number.NaN }, /requestTimeout must be a number of milliseconds from 0 to 2147483647 .* not NaN/]
  ])("refuses %s %o in every adapter", async (_name, options, message) => {
    expect(() => createFetchHandler(api.handler, options)).toThrow(message)
    expect(() => createNodeHandler(api.handler, options)).toThrow(message)
    // toHttpApp has no request timeout of its own: the Effect server's.
    if ("bodyLimit" in options) expect(() => toHttpApp(api, options)).toThrow(message)
    await expect(api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, ...options })).rejects.toThrow(message)
  })

  it.each([
    ["gracefulShutdownTimeout", { gracefulShutdownTimeout: Number.POSITIVE_INFINITY }, /gracefulShutdownTimeout must be a number of milliseconds .* not Infinity/],
    ["gracefulShutdownTimeout", { gracefulShutdownTimeout: 2 ** 31 }, /gracefulShutdownTimeout must be .* not 2147483648/],
    ["keepAliveTimeout", { keepAliveTimeout: Number.POSITIVE_INFINITY }, /keepAliveTimeout must be .* not Infinity/],
    ["headersTimeout", { headersTimeout: Number.NaN }, /headersTimeout must be .* not NaN/],
    ["workers", { workers: 1.5 }, /workers must be a whole number of processes, 1 or more, not 1.5/]
  ])("refuses %s %o at start()", async (_name, options, message) => {
    await expect(api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, ...options })).rejects.toThrow(message)
  })

  it("takes an empty hostname (HOST= unset in a shell) for none: localhost, not every interface", async () => {
    const server = await api.start({ port: 0, hostname: "", handleSignals: false })
    try {
      expect(server.hostname).toBe("localhost")
      expect(server.url).toBe(`http://localhost:${server.port}`)
    } finally {
      await server.stop()
    }
  })
})

describe("hostile input costs time linear in its length", () => {
  const api = defineServe({
    queries: {
      top: { inputSchema: Schema.Struct({ limit: Schema.Number }), query: ({ input }: { input: { limit: number } }) => input },
      report: { method: "POST", inputSchema: Schema.Struct({ limit: Schema.Number }), query: ({ input }: { input: { limit: number } }) => input }
    }
  })

  // A long run of digits ending in a letter made the number test backtrack over every way of
  // splitting the run: 64 KB took 6 s of the event loop, these would take minutes. Now a 400 at once.
  it("refuses a 1 MB number-like text in a query string or a form body as invalid, without blocking", async () => {
    const digits = `${"1".repeat(1_000_000)}x`
    const fromQuery = await api.handler({ method: "GET", path: "/api/analytics/top", query: { limit: digits }, headers: { host: "t" } })
    expect(fromQuery.status).toBe(400)
    const fromForm = await api.handler({
      method: "POST",
      path: "/api/analytics/report",
      query: {},
      headers: { host: "t", "content-type": "application/x-www-form-urlencoded" },
      body: `limit=${digits}`
    })
    expect(fromForm.status).toBe(400)
    expect((await api.handler({ method: "GET", path: "/api/analytics/top", query: { limit: "12.5e1" }, headers: { host: "t" } })).body).toBe('{"limit":125}')
  }, 5_000)
})
