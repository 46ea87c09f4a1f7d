import { connect } from "node:net"
import { fileURLToPath } from "node:url"
import { defineServe } from "queryserve"
import { afterEach, describe, expect, it } from "vitest"
import { openConnection, statusLines } from "../support/rawHttp.js"
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js"

const drainServer = fileURLToPath(new URL("../support/drainServer.ts", import.meta.url))

/** Resolves once nothing accepts connections on `port` any more. */
const refusesConnections = async (port: number): Promise<void> => {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1")
      socket.once("connect", () => {
        socket.destroy()
        resolve(false)
      })
      socket.once("error", () => resolve(true))
    })
    if (refused) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("graceful shutdown on SIGTERM (server in a child process)", () => {
  let server: ServerProcess | undefined
  afterEach(() => server?.kill())

  it("lets 50 in-flight slow requests complete, answers a new request on an open connection 503, then exits", async () => {
    server = await startServerProcess(drainServer)
    const { port } = server
    const base = `http://127.0.0.1:${port}/api/analytics`

    // A keep-alive connection that served one request and sits idle when the signal comes.
    const idle = await openConnection(port)
    idle.write("GET /api/analytics/fast HTTP/1.1\r\nHost: t\r\n\r\n")
    expect(statusLines(await idle.readUntil((text) => text.includes('{"fast":true}')))).toEqual(["HTTP/1.1 200 OK"])

    const inFlight = Array.from({ length: 50 }, () => fetch(`${base}/slow`))
    await server.waitForLines((lines) => lines.filter((line) => line === "started").length === 50)
    server.child.kill("SIGTERM")
    await refusesConnections(port)

    idle.write("GET /api/analytics/fast HTTP/1.1\r\nHost: t\r\n\r\n")
    const refused = await idle.readUntil((text) => text.includes("SERVICE_UNAVAILABLE"))
    expect(statusLines(refused)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable"])
    expect(refused.slice(refused.indexOf("HTTP/1.1 503")).toLowerCase()).toContain("connection: close")
    await idle.closed

    const responses = await Promise.all(inFlight)
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200))
    expect(await Promise.all(responses.map((response) => response.json()))).toEqual(Array(50).fill({ done: true }))
    expect(responses[0]!.headers.get("connection")).toBe("close")
    // Drained, the server re-raises the signal so the process ends the way SIGTERM ends it.
    expect(await server.exited).toBe("SIGTERM")
  })
})

describe("stop()", () => {
  /** Resolved by the hanging handler once its request is in flight (a fixed wait loses on a busy machine). */
  let handlerEntered = (): void => {}
  const api = defineServe({
    queries: {
      hang: () => {
        handlerEntered()
        return new Promise(() => {})
      },
      ping: () => "pong"
    }
  })

  it("removes its signal listeners", async () => {
    const before = [process.listenerCount("SIGTERM"), process.listenerCount("SIGINT")]
    const servers = await Promise.all([1, 2, 3].map(() => api.start({ port: 0, hostname: "127.0.0.1" })))
    expect(process.listenerCount("SIGTERM")).toBe(before[0]! + 1)
    await Promise.all(servers.map((server) => server.stop()))
    expect([process.listenerCount("SIGTERM"), process.listenerCount("SIGINT")]).toEqual(before)
  })

  it("closes the connections of requests still running after gracefulShutdownTimeout", async () => {
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, requestTimeout: 0, gracefulShutdownTimeout: 300 })
    const inFlight = new Promise<void>((resolve) => (handlerEntered = resolve))
    const hanging = fetch(`${server.url}/api/analytics/hang`).then(
      () => "answered",
      () => "connection closed"
    )
    await inFlight
    const started = performance.now()
    await server.stop()
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    expect(await hanging).toBe("connection closed")
  })

  it("answers a request that reached an idle connection before stop(), instead of closing the connection under it", async () => {
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    const idle = await openConnection(server.port)
    idle.write("GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\n\r\n")
    await idle.readUntil((text) => text.includes("pong"))
    // The request is in the server's socket buffer, not yet read, when the drain finds nothing in flight.
    idle.write("GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\n\r\n")
    const stopped = server.stop()
    const received = await idle.readUntil((text) => statusLines(text).length === 2).catch((error: Error) => error.message)
    expect(statusLines(received)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable"])
    await idle.closed
    await stopped
  })

  it("is idempotent and resolves at once with nothing in flight", async () => {
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    expect(await (await fetch(`${server.url}/api/analytics/ping`)).json()).toBe("pong")
    await Promise.all([server.stop(), server.stop()])
    await expect(fetch(`${server.url}/api/analytics/ping`)).rejects.toThrow()
  })
})
