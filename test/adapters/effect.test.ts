import { HttpApp, HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { defineServe, type ServeQueryEvent, toHttpApp } from "queryserve"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { openConnection, statusLines } from "../support/rawHttp.js"
import { parentName, recordingTracer } from "../support/recordingTracer.js"

class Greeter extends Context.Tag("test/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}

const seen = { aborted: false }
const api = defineServe({
  queries: {
    hello: ({ input }: { input: { name?: string } }) => Effect.map(Greeter, (greeter) => ({ message: greeter.greet(input.name ?? "world") })),
    echo: { method: "POST", query: ({ input }: { input: unknown }) => ({ received: input }) },
    rows: { cacheTtlMs: 60_000, query: () => [{ region: "eu", total: 1 }] },
    waits: ({ ctx }: { ctx: { signal: AbortSignal } }) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => {
          seen.aborted = true
          resolve(null)
        })
      )
  },
  layer: Layer.succeed(Greeter, { greet: (name) => `hello ${name}` })
})

/** An Effect user's own server: a router with a route of theirs, and the API mounted under its base path. */
const serve = (includePrefix: boolean) => {
  const router = HttpRouter.empty.pipe(
    HttpRouter.get("/health", HttpServerResponse.text("ok")),
    HttpRouter.mountApp("/api/analytics", toHttpApp(api), { includePrefix })
  )
  return ManagedRuntime.make(
    HttpServer.serve(router).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
  )
}

describe.each([true, false])("toHttpApp mounted with HttpRouter.mountApp (includePrefix: %s) on NodeHttpServer", (includePrefix) => {
  const runtime = serve(includePrefix)
  let base = ""
  beforeAll(async () => {
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    base = `http://127.0.0.1:${(address as unknown as AddressInfo).port}`
  })
  afterAll(() => runtime.dispose())

  it("serves the user's own routes next to the API", async () => {
    expect(await (await fetch(`${base}/health`)).text()).toBe("ok")
  })

  it("runs an Effect handler with services from config.layer", async () => {
    const response = await fetch(`${base}/api/analytics/hello?name=effect`, { headers: { "x-request-id": "eff-1" } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(response.headers.get("x-request-id")).toBe("eff-1")
    expect(await response.json()).toEqual({ message: "hello effect" })
  })

  it("reads bodies, refuses oversized ones with 413 and answers errors with the envelope", async () => {
    const echo = await fetch(`${base}/api/analytics/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' })
    expect(await echo.json()).toEqual({ received: { a: 1 } })
    const big = await fetch(`${base}/api/analytics/echo`, { method: "POST", body: "x".repeat(2 * 1024 * 1024) })
    expect(big.status).toBe(413)
    expect((await big.json()).error.type).toBe("PAYLOAD_TOO_LARGE")
    const missing = await fetch(`${base}/api/analytics/nope`)
    expect(missing.status).toBe(404)
    expect((await missing.json()).error.type).toBe("NOT_FOUND")
  })

  it("answers HEAD with the status and headers of GET, Content-Type and Content-Length included, without the body", async () => {
    const get = await fetch(`${base}/api/analytics/rows`)
    const head = await fetch(`${base}/api/analytics/rows`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"))
    expect(head.headers.get("etag")).toBe(get.headers.get("etag"))
    expect(await head.text()).toBe("")
  })

  it("gives the other output formats, cache validators and 304 the same way", async () => {
    const csv = await fetch(`${base}/api/analytics/rows.csv`)
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present")
    expect(await csv.text()).toBe("region,total\r\neu,1\r\n")
    const etag = csv.headers.get("etag")!
    const again = await fetch(`${base}/api/analytics/rows.csv`, { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
  })
})

describe("toHttpApp as the whole server", () => {
  it("serves every route of the API", async () => {
    const runtime = ManagedRuntime.make(
      HttpServer.serve(toHttpApp(api)).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
    )
    try {
      const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
      const base = `http://127.0.0.1:${(address as unknown as AddressInfo).port}/api/analytics`
      expect(await (await fetch(`${base}/hello?name=all`)).json()).toEqual({ message: "hello all" })
      expect((await fetch(`${base}/openapi.json`)).status).toBe(200)
    } finally {
      await runtime.dispose()
    }
  })
})

describe("toHttpApp and interruption", () => {
  it("aborts ctx.signal when the client goes away", async () => {
    seen.aborted = false
    const runtime = serve(true)
    try {
      const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
      const controller = new AbortController()
      const request = fetch(`http://127.0.0.1:${(address as unknown as AddressInfo).port}/api/analytics/waits`, { signal: controller.signal })
      await new Promise((resolve) => setTimeout(resolve, 100))
      controller.abort()
      await expect(request).rejects.toThrow()
      await expect.poll(() => seen.aborted).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })

  it("reports a client that went away as 499, without onError, as the other adapters do", async () => {
    const events: Array<ServeQueryEvent> = []
    const errors: Array<unknown> = []
    let reason: unknown
    const watched = defineServe({
      queries: {
        waits: ({ ctx }: { ctx: { signal: AbortSignal } }) =>
          new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject((reason = ctx.signal.reason))))
      },
      queryLogging: (event) => void events.push(event),
      hooks: { onError: ({ error }) => void errors.push(error) }
    })
    const runtime = ManagedRuntime.make(
      HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", toHttpApp(watched), { includePrefix: true }))).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    try {
      const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
      const controller = new AbortController()
      const request = fetch(`http://127.0.0.1:${(address as unknown as AddressInfo).port}/api/analytics/waits`, { signal: controller.signal })
      await expect.poll(() => events.length).toBe(1)
      controller.abort()
      await expect(request).rejects.toThrow()
      await expect.poll(() => events.length).toBe(2)
      expect(events[1]).toMatchObject({ status: "error", responseStatus: 499 })
      expect(reason).toMatchObject({ name: "AbortError", message: "The client closed the connection" })
      expect(errors).toEqual([])
    } finally {
      await runtime.dispose()
      await watched.dispose()
    }
  })

  it("aborts ctx.signal when the Effect user's own timeout interrupts the request", async () => {
    seen.aborted = false
    const withTimeout = toHttpApp(api).pipe(
      Effect.timeoutTo({
        duration: "150 millis",
        onSuccess: (response) => response,
        onTimeout: () => HttpServerResponse.text("took too long", { status: 503 })
      })
    )
    const runtime = ManagedRuntime.make(
      HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", withTimeout, { includePrefix: true }))).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    try {
      const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
      const response = await fetch(`http://127.0.0.1:${(address as unknown as AddressInfo).port}/api/analytics/waits`)
      expect(response.status).toBe(503)
      expect(await response.text()).toBe("took too long")
      expect(seen.aborted).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })
})

describe("toHttpApp and tracing", () => {
  it("parents the stage spans under the HTTP server's span of the request", async () => {
    const { spans, layer: tracerLayer } = recordingTracer()
    const traced = defineServe({ queries: { ping: () => "pong" }, layer: tracerLayer })
    const runtime = ManagedRuntime.make(
      HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", toHttpApp(traced), { includePrefix: true }))).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(tracerLayer)
      )
    )
    try {
      const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
      expect(await (await fetch(`http://127.0.0.1:${(address as unknown as AddressInfo).port}/api/analytics/ping`)).json()).toBe("pong")
      expect(parentName(spans.find((span) => span.name === "queryserve.request")!)).toBe("http.server GET")
    } finally {
      await runtime.dispose()
    }
  })
})

/** A served runtime's base URL, for tests that build their own server. */
const baseOf = async (runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>): Promise<string> => {
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  return `http://127.0.0.1:${(address as unknown as AddressInfo).port}`
}

describe("toHttpApp behind a middleware that read the body", () => {
  it("uses the body read before, not the query string, and still applies the body limit to it", async () => {
    // As one checking an HMAC signature over the raw body would.
    const readsBody = HttpMiddleware.make((app) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.flatMap(Effect.orDie(request.text), () => app))
    )
    const router = HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", toHttpApp(api, { bodyLimit: 64 }), { includePrefix: true }))
    const runtime = ManagedRuntime.make(
      HttpServer.serve(router, readsBody).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
    )
    try {
      const url = `${await baseOf(runtime)}/api/analytics/echo?n=5`
      const echo = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' })
      expect(await echo.json()).toEqual({ received: { a: 1 } })
      // Chunked, so that only the size of what was read can tell it is too large.
      const chunked = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify("x".repeat(100))))
          controller.close()
        }
      })
      const big = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: chunked, duplex: "half" } as RequestInit)
      expect(big.status).toBe(413)
      expect((await big.json()).error.type).toBe("PAYLOAD_TOO_LARGE")
    } finally {
      await runtime.dispose()
    }
  })
})

describe("toHttpApp and headers HTTP refuses", () => {
  it("answers the 500 envelope with the request id and CORS headers, and logs why", async () => {
    const withCors = defineServe({
      cors: { origin: ["https://app.example"] },
      queries: {
        badHeader: ({ ctx }: { ctx: { setHeader: (name: string, value: string) => void } }) => {
          ctx.setHeader("x-note", "line1\r\nline2")
          return { ok: true }
        }
      }
    })
    const runtime = ManagedRuntime.make(
      HttpServer.serve(toHttpApp(withCors)).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
    )
    const logged = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const response = await fetch(`${await baseOf(runtime)}/api/analytics/badHeader`, {
        headers: { origin: "https://app.example", "x-request-id": "bad-1" }
      })
      expect(response.status).toBe(500)
      expect(response.headers.get("x-request-id")).toBe("bad-1")
      expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example")
      expect((await response.json()).error.type).toBe("INTERNAL_SERVER_ERROR")
      expect(logged).toHaveBeenCalledWith(expect.stringContaining("answering 500 instead"), expect.any(TypeError))
    } finally {
      logged.mockRestore()
      await runtime.dispose()
      await withCors.dispose()
    }
  })
})

describe("toHttpApp and a chunked body over the limit", () => {
  const limited = toHttpApp(api, { bodyLimit: 1024 })
  const chunk = "a".repeat(16 * 1024)

  it("answers 413 with Connection: close on NodeHttpServer while the client is still sending", async () => {
    const router = HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", limited, { includePrefix: true }))
    const runtime = ManagedRuntime.make(
      HttpServer.serve(router).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
    )
    try {
      const port = Number(new URL(await baseOf(runtime)).port)
      const connection = await openConnection(port)
      connection.write("POST /api/analytics/echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
      // 1 MiB and no terminating chunk: only pausing the body, not reading it to its end, can answer this.
      for (let i = 0; i < 64; i++) connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
      const received = await connection.readUntil((text) => text.includes("PAYLOAD_TOO_LARGE"))
      expect(statusLines(received)).toEqual(["HTTP/1.1 413 Payload Too Large"])
      expect(received.toLowerCase()).toContain("connection: close")
      await connection.closed
    } finally {
      await runtime.dispose()
    }
  })

  it("answers 413 on a fetch runtime (HttpApp.toWebHandler)", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      }
    })
    const request = new Request("http://t/api/analytics/echo", { method: "POST", body, duplex: "half" } as RequestInit)
    const response = await HttpApp.toWebHandler(limited)(request)
    expect(response.status).toBe(413)
    expect((await response.json()).error.type).toBe("PAYLOAD_TOO_LARGE")
  })
})
