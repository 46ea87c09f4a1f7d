/**
 * responseTimeoutMs over real sockets: a client that never reads a big answer (buffered or streamed)
 * has its connection closed once that time passed, with startNodeServer and with createNodeHandler;
 * a client that reads keeps its connection.
 */
import { createServer, IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type AddressInfo, connect, Socket } from "node:net"
import { createNodeHandler, defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"

/** Far more than the kernel holds for a client that reads nothing (its receive window and the server's send buffer). */
const BIG = 16 * 1024 * 1024
const RESPONSE_TIMEOUT_MS = 300

const api = defineServe({
  queries: {
    big: () => ({ pad: "x".repeat(BIG) }),
    small: () => ({ ok: true }),
    /** Over the 1 KiB from which a body is compressed when the client allows it. */
    medium: () => ({ pad: "m".repeat(4096) }),
    rows: async function*() {
      const row = { pad: "y".repeat(1000) }
      for (let i = 0; i < BIG / 1000; i++) yield row
    }
  }
})

/** Resolves with how long after `since` the server closed its side of the next connection it accepts. */
const nextServerClose = (server: Server) =>
  new Promise<number>((resolve) => {
    server.once("connection", (socket: Socket) => {
      const since = performance.now()
      socket.once("close", () => resolve(performance.now() - since))
    })
  })

const opened = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket))
    socket.once("error", reject)
  })

/** Asks for `path` on a raw connection that then reads nothing at all. */
const askWithoutReading = async (port: number, path: string): Promise<Socket> => {
  const socket = await opened(port)
  socket.pause()
  // The server cuts it off: a reset is what the test expects.
  socket.on("error", () => {})
  socket.write(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`)
  return socket
}

/** Resolves once `count` bytes arrived on `socket` after the call. */
const received = (socket: Socket, count: number) =>
  new Promise<void>((resolve) => {
    let seen = 0
    const onData = (chunk: Buffer): void => {
      seen += chunk.length
      if (seen < count) return
      socket.off("data", onData)
      resolve()
    }
    socket.on("data", onData)
  })

describe.each([
  ["startNodeServer (api.start)", "start"],
  ["createNodeHandler", "handler"]
] as const)("responseTimeoutMs with %s", (_name, kind) => {
  let server: Server
  let running: RunningServer | undefined
  let port: number

  beforeAll(async () => {
    if (kind === "start") {
      running = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true, requestTimeout: 60_000, responseTimeoutMs: RESPONSE_TIMEOUT_MS })
      server = running.server!
      port = running.port
    } else {
      server = createServer(createNodeHandler(api.handler, { requestTimeout: 60_000, responseTimeoutMs: RESPONSE_TIMEOUT_MS }))
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      port = (server.address() as AddressInfo).port
    }
  })
  afterAll(async () => {
    if (running !== undefined) return running.stop()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  for (const [answer, path] of [["a buffered answer", "/api/analytics/big"], ["a streamed answer", "/api/analytics/rows"]] as const) {
    it(`closes the connection of a client that does not read ${answer} within responseTimeoutMs`, async () => {
      const closed = nextServerClose(server)
      const connection = await askWithoutReading(port, path)
      const after = await closed
      expect(after).toBeGreaterThanOrEqual(RESPONSE_TIMEOUT_MS - 50)
      // requestTimeout (60 s) is not what closed it.
      expect(after).toBeLessThan(10_000)
      connection.destroy()
    })
  }

  it("keeps serving a client that reads the whole answer, on the same connection", async () => {
    const socket = await opened(port)
    let closed = false
    socket.once("close", () => (closed = true))
    const request = "GET /api/analytics/big HTTP/1.1\r\nHost: t\r\n\r\n"
    for (let i = 0; i < 2; i++) {
      const answered = received(socket, BIG)
      socket.write(request)
      await answered
      await new Promise((resolve) => setTimeout(resolve, RESPONSE_TIMEOUT_MS * 2))
    }
    expect(closed).toBe(false)
    socket.destroy()
  })
})

it("refuses a responseTimeoutMs that is no duration, in createNodeHandler and start()", async () => {
  expect(() => createNodeHandler(api.handler, { responseTimeoutMs: Number.NaN })).toThrow(/responseTimeoutMs must be a number of milliseconds/)
  await expect(api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true, workers: 2, responseTimeoutMs: -1 }))
    .rejects.toThrow(/responseTimeoutMs must be a number of milliseconds/)
})

it.each([
  ["small", '{"ok":true}'],
  ["medium", JSON.stringify({ pad: "m".repeat(4096) })]
])("leaves a response stand-in that is no stream (a serverless shim's) alone: the %s answer sent whole, no error", async (key, expected) => {
  const spy = vi.spyOn(console, "error").mockImplementation(() => {})
  try {
    const req = new IncomingMessage(new Socket())
    const headers = { host: "localhost", "accept-encoding": "gzip" }
    Object.assign(req, { method: "GET", url: `/api/analytics/${key}`, headers, httpVersionMinor: 1 })
    const ended: Array<unknown> = []
    const res = {
      headersSent: false,
      setHeader: () => {},
      writeHead() {
        return this
      },
      end(body?: unknown) {
        ended.push(body)
        return this
      }
    }
    await createNodeHandler(api.handler, { responseTimeoutMs: RESPONSE_TIMEOUT_MS })(req, res as unknown as ServerResponse)
    // A stand-in without `req` is answered uncompressed: what it passes on is the body as written.
    expect(String(ended[0])).toBe(expected)
    expect(spy).not.toHaveBeenCalled()
  } finally {
    spy.mockRestore()
  }
})
