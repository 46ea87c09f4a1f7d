import { serve } from "@hono/node-server"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import {
  createFetchHandler,
  createPlatformEdgeHandler,
  createPlatformNodeHandler,
  defineServe,
  type ServeRequest
} from "queryserve"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"

const MiB = 1024 * 1024
const seen = { aborted: false }
const api = defineServe({
  queries: {
    echo: { method: "POST", query: ({ input }: { input: unknown }) => ({ received: input }) },
    whoami: ({ ctx }: { ctx: { request: ServeRequest } }) => ({ address: ctx.request.remoteAddress ?? null }),
    rows: () => [{ a: 1, b: "x" }],
    waits: ({ ctx }: { ctx: { signal: AbortSignal } }) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => {
          seen.aborted = true
          resolve("late")
        })
      )
  }
})

const post = (url: string, body: BodyInit, headers: Record<string, string> = { "content-type": "application/json" }) =>
  new Request(url, { method: "POST", body, headers, duplex: "half" } as RequestInit)

const streamOf = (bytes: number): ReadableStream<Uint8Array> => {
  const piece = new Uint8Array(64 * 1024).fill(97)
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close()
      controller.enqueue(piece)
      sent += piece.byteLength
    }
  })
}

describe("createFetchHandler with real Request objects", () => {
  const handle = createFetchHandler(api.handler, { requestTimeout: 200 })

  it("answers JSON bodies and the output formats", async () => {
    const echoed = await handle(post("http://x.test/api/analytics/echo", '{"n":1}'))
    expect(await echoed.json()).toEqual({ received: { n: 1 } })
    const csv = await handle(new Request("http://x.test/api/analytics/rows.csv"))
    expect(await csv.text()).toBe("a,b\r\n1,x\r\n")
  })

  // Middleware in front (Hono, a worker) may read the body itself; the 500 has no query event, so it is logged.
  it("answers a Request whose body was read before with the 500 envelope, and logs why", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const consumed = post("http://x.test/api/analytics/echo", '{"n":1}')
      await consumed.text()
      const answer = await handle(consumed)
      expect([answer.status, (await answer.json()).error.type]).toEqual([500, "INTERNAL_SERVER_ERROR"])
      expect(errors).toHaveBeenCalledWith("[queryserve] the adapter could not answer the request; answering 500", expect.any(TypeError))
    } finally {
      errors.mockRestore()
    }
  })

  it("refuses a body over the limit by Content-Length and while reading the stream", async () => {
    const declared = await handle(post("http://x.test/api/analytics/echo", "{}", { "content-length": String(2 * MiB) }))
    expect(declared.status).toBe(413)
    expect(declared.headers.get("x-request-id")).toBeTruthy()
    const streamed = await handle(post("http://x.test/api/analytics/echo", streamOf(2 * MiB)))
    expect(streamed.status).toBe(413)
    expect((await streamed.json()).error).toEqual({
      type: "PAYLOAD_TOO_LARGE",
      message: `The request body exceeds the limit of ${MiB} bytes`,
      details: { limitBytes: MiB }
    })
    const small = createFetchHandler(api.handler, { bodyLimit: 10 })
    expect((await small(post("http://x.test/api/analytics/echo", '{"a":"0123456789"}'))).status).toBe(413)
  })

  it("answers 504 after requestTimeout and aborts ctx.signal", async () => {
    seen.aborted = false
    const response = await handle(new Request("http://x.test/api/analytics/waits", { headers: { "x-request-id": "fetch-504" } }))
    expect(response.status).toBe(504)
    expect(response.headers.get("x-request-id")).toBe("fetch-504")
    expect((await response.json()).error.type).toBe("GATEWAY_TIMEOUT")
    expect(seen.aborted).toBe(true)
  })

  it("follows the Request's own signal in ctx.signal", async () => {
    seen.aborted = false
    const controller = new AbortController()
    const answer = createFetchHandler(api.handler, { requestTimeout: 0 })(new Request("http://x.test/api/analytics/waits", { signal: controller.signal }))
    controller.abort()
    expect(await (await answer).json()).toBe("late")
    expect(seen.aborted).toBe(true)
  })

  it("answers when the Request's signal aborts while its body stalls, and stops reading it", async () => {
    let cancelled = false
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('{"n":')),
      cancel: () => {
        cancelled = true
      }
    })
    const controller = new AbortController()
    const request = new Request("http://x.test/api/analytics/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stalled,
      duplex: "half",
      signal: controller.signal
    } as RequestInit & { duplex: "half" })
    const answer = createFetchHandler(api.handler, { requestTimeout: 0 })(request)
    setTimeout(() => controller.abort(), 20)
    const response = await answer
    expect(response.status).toBe(500)
    expect((await response.json()).error.type).toBe("INTERNAL_SERVER_ERROR")
    expect(cancelled).toBe(true)
  })

  it("answers HEAD with the headers of its GET (compression included) and no body", async () => {
    const big = defineServe({ queries: { rows: () => Array.from({ length: 200 }, (_, i) => ({ i, name: `row ${i}` })) } })
    const answer = createFetchHandler(big.handler)
    for (const headers of [{ "accept-encoding": "gzip" }, {}] as Array<Record<string, string>>) {
      const get = await answer(new Request("http://x.test/api/analytics/rows", { headers }))
      await get.arrayBuffer()
      const head = await answer(new Request("http://x.test/api/analytics/rows", { method: "HEAD", headers }))
      expect(head.status).toBe(200)
      expect(head.body).toBeNull()
      for (const name of ["content-encoding", "vary", "etag", "content-type"]) expect(head.headers.get(name)).toBe(get.headers.get(name))
    }
  })

  it("takes the client address from x-forwarded-for only with trustProxy", async () => {
    const request = () => new Request("http://x.test/api/analytics/whoami", { headers: { "x-forwarded-for": "198.51.100.4, 10.0.0.2" } })
    expect(await (await handle(request())).json()).toEqual({ address: null })
    expect(await (await createFetchHandler(api.handler, { trustProxy: true })(request())).json()).toEqual({ address: "10.0.0.2" })
    expect(await (await createFetchHandler(api.handler, { trustProxy: 2 })(request())).json()).toEqual({ address: "198.51.100.4" })
  })
})

describe("createFetchHandler behind a real server (@hono/node-server)", () => {
  let server: ReturnType<typeof serve>
  let base = ""
  beforeAll(async () => {
    await new Promise<void>((resolve) => {
      server = serve({ fetch: createFetchHandler(api.handler), port: 0, hostname: "127.0.0.1" }, (info) => {
        base = `http://127.0.0.1:${info.port}/api/analytics`
        resolve()
      })
    })
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("answers over HTTP, including a 413 for a streamed 2 MiB body", async () => {
    const echoed = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"over":"http"}' })
    expect(await echoed.json()).toEqual({ received: { over: "http" } })
    const big = await fetch(`${base}/echo`, { method: "POST", body: streamOf(2 * MiB), duplex: "half" } as RequestInit)
    expect(big.status).toBe(413)
    const missing = await fetch(`${base}/missing`)
    expect(missing.status).toBe(404)
  })
})

describe("platform handlers", () => {
  it("exports the edge handler under every method name and trusts the platform's x-forwarded-for", async () => {
    const handler = createPlatformEdgeHandler(api.handler)
    const { GET, POST } = handler
    expect(GET).toBe(handler)
    const whoami = await GET(new Request("https://app.example/api/analytics/whoami", { headers: { "x-forwarded-for": "192.0.2.9" } }))
    expect(await whoami.json()).toEqual({ address: "192.0.2.9" })
    const echoed = await POST(post("https://app.example/api/analytics/echo", '{"edge":true}'))
    expect(await echoed.json()).toEqual({ received: { edge: true } })
  })

  describe("Node runtime handler", () => {
    let server: Server
    let base = ""
    beforeAll(async () => {
      const handler = createPlatformNodeHandler(api.handler)
      // Like the platform's Node runtime: the body is read and parsed before the function runs.
      server = createServer((req: IncomingMessage & { body?: unknown }, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          if (chunks.length > 0) req.body = { parsedBy: "platform", raw: Buffer.concat(chunks).toString() }
          handler(req, res)
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/analytics`
    })
    afterAll(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })

    it("uses a body the runtime already parsed, and the forwarded client address", async () => {
      const echoed = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":2}' })
      expect(await echoed.json()).toEqual({ received: { parsedBy: "platform", raw: '{"n":2}' } })
      const whoami = await fetch(`${base}/whoami`, { headers: { "x-forwarded-for": "192.0.2.10" } })
      expect(await whoami.json()).toEqual({ address: "192.0.2.10" })
    })
  })
})
