/**
 * Regression: answers the adapters make themselves, before the pipeline runs (413, 408, 431,
 * protocol 400s, 503 while draining), carried no CORS headers, so a browser could not read them.
 */
import { type CorsOptions, createFetchHandler, defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exchange, header, type RawResponse } from "../reliability/support/rawClient.js"
import { openConnection, statusLines } from "../support/rawHttp.js"

const APP = "https://app.example.com"

const makeApi = (cors: true | CorsOptions) =>
  defineServe({
    cors,
    queries: {
      ping: () => "pong",
      echo: { method: "POST", query: ({ input }: { input: unknown }) => input },
      slow: () => new Promise((resolve) => setTimeout(() => resolve("late"), 400))
    }
  })

const start = (api: ReturnType<typeof makeApi>, extra: { headersTimeout?: number } = {}) =>
  api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, handleUncaughtErrors: false, bodyLimit: 1024, ...extra })

const send = async (port: number, request: string): Promise<RawResponse> => {
  const outcome = await exchange(port, request, { headRequest: false, timeoutMs: 5_000 })
  if (!outcome.answered) throw new Error(`no answer (${outcome.reason}): ${outcome.received}`)
  return outcome.response
}

const cors = (response: RawResponse) => ({
  origin: header(response, "access-control-allow-origin"),
  credentials: header(response, "access-control-allow-credentials"),
  vary: header(response, "vary"),
  exposed: header(response, "access-control-expose-headers")
})

describe("CORS on answers the Node adapter makes itself", () => {
  const fixed = makeApi({ origin: APP, credentials: true })
  const open = makeApi(true)
  let fixedServer: RunningServer
  let openServer: RunningServer
  beforeAll(async () => {
    ;[fixedServer, openServer] = await Promise.all([start(fixed, { headersTimeout: 200 }), start(open, { headersTimeout: 200 })])
  })
  afterAll(() => Promise.all([fixedServer.stop(), openServer.stop()]))

  it("413 by Content-Length reflects the allowed origin with credentials", async () => {
    const response = await send(
      fixedServer.port,
      `POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`
    )
    expect(response.status).toBe(413)
    expect(cors(response)).toMatchObject({ origin: APP, credentials: "true", vary: "Origin" })
    expect(cors(response).exposed).toContain("x-request-id")
  })

  it("413 while streaming a chunked body, and a foreign origin gets only Vary: Origin", async () => {
    const chunk = "x".repeat(2000)
    const request = (origin: string) =>
      `POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nOrigin: ${origin}\r\nContent-Type: application/json\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`
    const allowed = await send(fixedServer.port, request(APP))
    expect(allowed.status).toBe(413)
    expect(cors(allowed).origin).toBe(APP)
    const foreign = await send(fixedServer.port, request("https://evil.example.net"))
    expect(foreign.status).toBe(413)
    expect(cors(foreign)).toEqual({ origin: undefined, credentials: undefined, vary: "Origin", exposed: undefined })
  })

  it("431 and protocol 400s, where no header was parsed, get the answer for no Origin: `*`, or Vary: Origin", async () => {
    const huge = `GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\nX-Filler: ${"f".repeat(20_000)}\r\n\r\n`
    const malformed = `G E T /api/analytics/ping HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\n\r\n`
    for (const [request, status] of [[huge, 431], [malformed, 400]] as const) {
      const wildcard = await send(openServer.port, request)
      expect(wildcard.status).toBe(status)
      expect(cors(wildcard).origin).toBe("*")
      const reflected = await send(fixedServer.port, request)
      expect(reflected.status).toBe(status)
      expect(cors(reflected)).toEqual({ origin: undefined, credentials: undefined, vary: "Origin", exposed: undefined })
    }
  })

  it("408 when headers arrive too slowly", async () => {
    const outcome = await exchange(openServer.port, `GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\n`, {
      headRequest: false,
      timeoutMs: 5_000
    })
    if (!outcome.answered) throw new Error(`no answer: ${outcome.reason}`)
    expect(outcome.response.status).toBe(408)
    expect(cors(outcome.response).origin).toBe("*")
  })

  it("400 for an HTTP/1.1 request without Host reflects the origin it did send", async () => {
    const response = await send(fixedServer.port, `GET /api/analytics/ping HTTP/1.1\r\nOrigin: ${APP}\r\n\r\n`)
    expect(response.status).toBe(400)
    expect(cors(response)).toMatchObject({ origin: APP, credentials: "true" })
  })

  it("503 while draining, on a kept-alive connection", async () => {
    const server = await start(fixed)
    const idle = await openConnection(server.port)
    idle.write(`GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\n\r\n`)
    await idle.readUntil((text) => text.includes('"pong"'))
    const inFlight = fetch(`${server.url}/api/analytics/slow`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const stopped = server.stop()
    idle.write(`GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\nOrigin: ${APP}\r\n\r\n`)
    const received = await idle.readUntil((text) => text.includes("SERVICE_UNAVAILABLE"))
    expect(statusLines(received)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable"])
    const refused = received.slice(received.indexOf("HTTP/1.1 503")).toLowerCase()
    expect(refused).toContain(`access-control-allow-origin: ${APP}`)
    expect(refused).toContain("access-control-allow-credentials: true")
    expect((await inFlight).status).toBe(200)
    await stopped
  })
})

describe("CORS on answers the fetch handler makes itself", () => {
  it("413 carries the same CORS headers as the pipeline's answers", async () => {
    const api = makeApi({ origin: APP })
    const handler = createFetchHandler(api.handler, { bodyLimit: 16 })
    const refused = await handler(
      new Request("http://localhost/api/analytics/echo", { method: "POST", headers: { origin: APP, "content-type": "application/json" }, body: "x".repeat(64) })
    )
    expect(refused.status).toBe(413)
    expect(refused.headers.get("access-control-allow-origin")).toBe(APP)
    expect(refused.headers.get("vary")).toBe("Origin")
    const pipeline = await handler(new Request("http://localhost/api/analytics/ping", { headers: { origin: APP } }))
    expect(pipeline.headers.get("access-control-allow-origin")).toBe(refused.headers.get("access-control-allow-origin"))
  })
})
