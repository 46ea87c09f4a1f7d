/**
 * Streamed answers over a real socket (the Node server) and through the fetch handler: rows written
 * as the transport takes them, the generator ended when the client leaves, a failure after the first
 * row cutting the transfer.
 */
import { createFetchHandler, type RunningServer, type ServeQueryEvent } from "queryserve"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeApi, SOCKET_CHECKS, open, type Probe, readSome, ROW_COUNT, sleep, until } from "./streamingApi.js"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

describe("streamed answers on the Node server", () => {
  const probes: Record<string, Probe> = {}
  const events: Array<ServeQueryEvent> = []
  const errors: Array<unknown> = []
  const api = makeApi(probes, events, errors)
  let server: RunningServer
  const url = (path: string) => `${server.url}/api/analytics/${path}`
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, requestTimeout: 500 })
  })
  afterAll(async () => {
    await server.stop()
    await api.dispose()
  })

  for (const [name, check] of SOCKET_CHECKS) it(name, () => check({ url, errors, events, probes }))

  it("keeps heap growth under 64 MiB for a full read of 300,000 rows", async () => {
    // Live memory, not garbage yet to be collected: sampled right after a full collection.
    const live = () => {
      gc()
      return process.memoryUsage().heapUsed
    }
    const before = live()
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, live())), 100)
    const response = await fetch(url("big.ndjson"))
    const reader = response.body!.getReader()
    let bytes = 0
    for (let next = await reader.read(); next.done !== true; next = await reader.read()) bytes += next.value.byteLength
    clearInterval(sampler)
    expect(bytes).toBeGreaterThan(ROW_COUNT * 90)
    expect(peak - before).toBeLessThan(64 * 1024 * 1024)
  })

  it("runs the generator's finally and aborts ctx.signal within 100 ms of the client leaving mid-stream", async () => {
    const { response, destroy } = await open(url("big"))
    await readSome(response, 256 * 1024)
    const leftAt = destroy()
    await until(() => probes.big!.finallyAt !== undefined, 1000)
    expect(probes.big!.finallyAt).toBeDefined()
    expect(probes.big!.finallyAt! - leftAt).toBeLessThan(100)
    expect(probes.big!.signalAborted).toBe(true)
    expect(probes.big!.pulled).toBeLessThan(ROW_COUNT)
  })

  it("reports a client that left as 499, without onError", async () => {
    errors.length = 0
    events.length = 0
    const { response, destroy } = await open(url("big"))
    await readSome(response, 64 * 1024)
    destroy()
    await until(() => events.some((event) => event.endpointKey === "big" && event.status === "error"))
    expect(events.find((event) => event.endpointKey === "big" && event.status === "error")?.responseStatus).toBe(499)
    expect(errors).toEqual([])
  })

  it("ends the stream of a client that reads nothing after requestTimeout", async () => {
    const { destroy } = await open(url("big"))
    await until(() => probes.big?.finallyAt !== undefined, 3000)
    expect(probes.big!.finallyAt).toBeDefined()
    expect(probes.big!.pulled).toBeLessThan(ROW_COUNT)
    destroy()
  })

  it("answers HEAD with the headers alone, and ends the iterator", async () => {
    const response = await fetch(url("big"), { method: "HEAD" })
    expect(response.status).toBe(200)
    expect(await response.text()).toBe("")
    await until(() => probes.big?.finallyAt !== undefined)
    expect(probes.big!.pulled).toBeLessThan(10)
  })

  it("gives in-process callers the rows as an async iterable", async () => {
    const rows: Array<unknown> = []
    for await (const row of (await api.execute("few")) as AsyncIterable<unknown>) rows.push(row)
    expect(rows).toEqual([{ region: "eu", total: 1 }, { region: "us", total: 2 }, { region: "apac", total: 3 }])
  })

  it("bounds the wait for each next row by requestTimeout: the transfer is cut", async () => {
    const response = await fetch(url("stalls"))
    expect(response.status).toBe(200)
    const started = performance.now()
    await expect(response.text()).rejects.toThrow()
    expect(performance.now() - started).toBeLessThan(1500)
    await until(() => probes.stalls?.finallyAt !== undefined, 3000)
    expect(probes.stalls!.finallyAt).toBeDefined()
  })
})

describe("streamed answers through the fetch handler", () => {
  const probes: Record<string, Probe> = {}
  const events: Array<ServeQueryEvent> = []
  const errors: Array<unknown> = []
  const api = makeApi(probes, events, errors)
  const handle = createFetchHandler(api.handler, { requestTimeout: 500 })
  afterAll(() => api.dispose())
  const get = (path: string, init?: RequestInit) => handle(new Request(`http://localhost/api/analytics/${path}`, init))

  it("pulls rows only as the body is read", async () => {
    const response = await get("big")
    const reader = response.body!.getReader()
    let received = 0
    for (let i = 0; i < 20; i++) {
      const { value } = await reader.read()
      received += value!.byteLength
      await sleep(5)
      expect(probes.big!.pulled * 100 - received).toBeLessThan(256 * 1024)
    }
    await reader.cancel()
    await until(() => probes.big!.finallyAt !== undefined)
    expect(probes.big!.finallyAt).toBeDefined()
    expect(probes.big!.signalAborted).toBe(true)
  })

  it("ends the generator within 100 ms when the Request's signal aborts", async () => {
    const controller = new AbortController()
    const response = await get("big", { signal: controller.signal })
    const reader = response.body!.getReader()
    await reader.read()
    const leftAt = performance.now()
    controller.abort()
    await until(() => probes.big!.finallyAt !== undefined, 1000)
    expect(probes.big!.finallyAt! - leftAt).toBeLessThan(100)
  })

  it("writes every row of a full read, as NDJSON and CSV", async () => {
    const ndjson = await (await get("big.ndjson")).text()
    expect(ndjson.split("\n").length - 1).toBe(ROW_COUNT)
    const csv = await (await get("few.csv")).text()
    expect(csv).toBe("region,total\r\neu,1\r\nus,2\r\napac,3\r\n")
  })

  it("errors the body on a failure after the first row, and answers the envelope before it", async () => {
    const cut = await get("failsLater")
    expect(cut.status).toBe(200)
    await expect(cut.text()).rejects.toThrow()
    const early = await get("failsFirst")
    expect(early.status).toBe(500)
  })
})
