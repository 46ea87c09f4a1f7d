/**
 * Streamed answers through `toHttpApp`, served by @effect/platform-node's server over a real socket:
 * rows written as the socket takes them, the generator ended when the client leaves, a failure after
 * the first row cutting the transfer.
 */
import { HttpApp, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { type ServeQueryEvent, toHttpApp } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeApi, SOCKET_CHECKS, open, type Probe, readSome, ROW_COUNT, until } from "./streamingApi.js"

describe("streamed answers through toHttpApp on NodeHttpServer", () => {
  const probes: Record<string, Probe> = {}
  const events: Array<ServeQueryEvent> = []
  const errors: Array<unknown> = []
  const api = makeApi(probes, events, errors)
  const runtime = ManagedRuntime.make(
    HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", toHttpApp(api), { includePrefix: true }))).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  )
  let base = ""
  const url = (path: string) => `${base}/api/analytics/${path}`
  beforeAll(async () => {
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    base = `http://127.0.0.1:${(address as unknown as AddressInfo).port}`
  })
  afterAll(async () => {
    await runtime.dispose()
    await api.dispose()
  })

  for (const [name, check] of SOCKET_CHECKS) it(name, () => check({ url, errors, events, probes }))

  it("runs the generator's finally and aborts ctx.signal within 100 ms of the client leaving, reported as 499 without onError", async () => {
    events.length = 0
    errors.length = 0
    const { response, destroy } = await open(url("big"))
    await readSome(response, 256 * 1024)
    const leftAt = destroy()
    await until(() => probes.big!.finallyAt !== undefined, 1000)
    expect(probes.big!.finallyAt! - leftAt).toBeLessThan(100)
    expect(probes.big!.signalAborted).toBe(true)
    expect(probes.big!.pulled).toBeLessThan(ROW_COUNT)
    await until(() => events.some((event) => event.endpointKey === "big" && event.status === "error"))
    expect(events.find((event) => event.endpointKey === "big" && event.status === "error")?.responseStatus).toBe(499)
    expect(errors).toEqual([])
  })

  it("answers HEAD with the headers alone, and ends the iterator", async () => {
    const response = await fetch(url("big"), { method: "HEAD" })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(await response.text()).toBe("")
    await until(() => probes.big?.finallyAt !== undefined)
    expect(probes.big!.pulled).toBeLessThan(10)
  })
})

describe("streamed answers through toHttpApp on a fetch-based server (HttpApp.toWebHandler)", () => {
  const probes: Record<string, Probe> = {}
  const api = makeApi(probes, [], [])
  const handle = HttpApp.toWebHandler(toHttpApp(api))
  afterAll(() => api.dispose())
  const get = (path: string) => handle(new Request(`http://localhost/api/analytics/${path}`))

  it("streams every row, and errors the body on a failure after the first row", async () => {
    const ndjson = await (await get("big.ndjson")).text()
    expect(ndjson.split("\n").length - 1).toBe(ROW_COUNT)
    const cut = await get("failsLater")
    expect(cut.status).toBe(200)
    await expect(cut.text()).rejects.toThrow()
  })

  it("ends the generator when the body is cancelled", async () => {
    const reader = (await get("big")).body!.getReader()
    await reader.read()
    await reader.cancel()
    await until(() => probes.big!.finallyAt !== undefined)
    expect(probes.big!.signalAborted).toBe(true)
    expect(probes.big!.pulled).toBeLessThan(ROW_COUNT)
  })

  it("ends the generator when the client leaves before its body was read at all", async () => {
    delete probes.big
    const client = new AbortController()
    const response = await handle(new Request("http://localhost/api/analytics/big", { signal: client.signal }))
    expect(response.status).toBe(200)
    client.abort()
    await until(() => probes.big?.finallyAt !== undefined)
    expect(probes.big!.signalAborted).toBe(true)
  })
})
