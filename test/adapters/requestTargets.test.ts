import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createFetchHandler, createNodeHandler, defineServe } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openConnection } from "../support/rawHttp.js"

// Each request here is sent both ways, as raw bytes to the Node adapter and as a fetch Request to the
// fetch handler: the two must answer it alike, and as the URL and HTTP rules say.
const api = defineServe({
  cors: { origin: ["https://app.example"] },
  queries: {
    report: ({ input }: { input: unknown }) => ({ received: input }),
    "revenue by région": () => "reached",
    echo: { method: "POST", query: ({ input }: { input: unknown }) => ({ received: input }) }
  }
})
const BODY_LIMIT = 16
const viaFetch = createFetchHandler(api.handler, { bodyLimit: BODY_LIMIT })

let server: Server
let port: number
beforeAll(async () => {
  server = createServer(createNodeHandler(api.handler, { bodyLimit: BODY_LIMIT }))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

interface Answer {
  readonly status: number
  readonly body: string
}

/** One request as raw bytes over a fresh connection; the answer's status and body. */
const viaNode = async (head: string, body: Buffer = Buffer.alloc(0)): Promise<Answer> => {
  const connection = await openConnection(port)
  try {
    connection.write(Buffer.concat([Buffer.from(`${head}Connection: close\r\n\r\n`, "latin1"), body]))
    await connection.closed
    const received = await connection.readUntil(() => true)
    return { status: Number(received.slice(9, 12)), body: received.slice(received.indexOf("\r\n\r\n") + 4) }
  } finally {
    connection.destroy()
  }
}

const answerOf = async (response: Response): Promise<Answer> => ({ status: response.status, body: await response.text() })

describe("request targets", () => {
  it("ignores a fragment: it is never part of the path or the query", async () => {
    const fetched = await answerOf(await viaFetch(new Request("http://x.test/api/analytics/report?from=2025-01-01#top")))
    expect(fetched).toEqual({ status: 200, body: JSON.stringify({ received: { from: "2025-01-01" } }) })
    const bare = await answerOf(await viaFetch(new Request("http://x.test/api/analytics/report#top")))
    expect(bare.status).toBe(200)
  })

  it("routes an absolute-form target (RFC 9112: a server must accept it) like its origin-form", async () => {
    const answer = await viaNode("GET http://x.test/api/analytics/report?region=eu HTTP/1.1\r\nHost: x.test\r\n")
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ received: { region: "eu" } }) })
    const noPath = await viaNode("GET http://x.test?region=eu HTTP/1.1\r\nHost: x.test\r\n")
    expect(noPath.status).toBe(404)
  })

  it.each(["/api/analytics/./report", "/api/analytics/x/../report", "/api/analytics/%2E/report", "/api/analytics/x/%2e%2e/report", "/api\\analytics\\report"])(
    "resolves the dot segments and backslashes of %s as a URL parser does, on both adapters",
    async (path) => {
      const expected = { status: 200, body: JSON.stringify({ received: {} }) }
      expect(await answerOf(await viaFetch(new Request(`http://x.test${path}`)))).toEqual(expected)
      expect(await viaNode(`GET ${path} HTTP/1.1\r\nHost: x.test\r\n`)).toEqual(expected)
    }
  )

  it("reaches a key with a space or a letter beyond ASCII by its percent-encoded path, which is how clients send it", async () => {
    const path = `/api/analytics/${encodeURIComponent("revenue by région")}`
    const expected = { status: 200, body: '"reached"' }
    expect(await answerOf(await viaFetch(new Request(`http://x.test${path}`)))).toEqual(expected)
    expect(await viaNode(`GET ${path} HTTP/1.1\r\nHost: x.test\r\n`)).toEqual(expected)
    // A method the route does not take is still told what it does take.
    expect((await viaNode(`DELETE ${path} HTTP/1.1\r\nHost: x.test\r\n`)).status).toBe(405)
    expect((await viaNode("GET /api/analytics/revenue%20by%ZZ HTTP/1.1\r\nHost: x.test\r\n")).status).toBe(404)
  })

  it("does not resolve its way out of a 404: a path that resolves to no route is still one", async () => {
    expect((await viaNode("GET /api/analytics/report/../../secret HTTP/1.1\r\nHost: x.test\r\n")).status).toBe(404)
  })
})

describe("bodies", () => {
  it("reads a JSON body that starts with a UTF-8 byte order mark alike on both adapters", async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])
    const expected = { status: 200, body: JSON.stringify({ received: { a: 1 } }) }
    const fetched = await viaFetch(
      new Request("http://x.test/api/analytics/echo", { method: "POST", headers: { "content-type": "application/json" }, body })
    )
    expect(await answerOf(fetched)).toEqual(expected)
    const head = `POST /api/analytics/echo HTTP/1.1\r\nHost: x.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`
    expect(await viaNode(head, body)).toEqual(expected)
  })

  it("reads no OPTIONS body on either adapter: a preflight with one over the limit is still answered", async () => {
    const body = Buffer.from("x".repeat(BODY_LIMIT * 2))
    const headers = { origin: "https://app.example", "access-control-request-method": "POST" }
    const fetched = await viaFetch(new Request("http://x.test/api/analytics/echo", { method: "OPTIONS", headers, body }))
    expect(fetched.status).toBe(204)
    const head = "OPTIONS /api/analytics/echo HTTP/1.1\r\nHost: x.test\r\nOrigin: https://app.example\r\n" +
      `Access-Control-Request-Method: POST\r\nContent-Length: ${body.length}\r\n`
    expect((await viaNode(head, body)).status).toBe(204)
  })
})
