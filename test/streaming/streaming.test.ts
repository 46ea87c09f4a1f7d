/**
 * Streamed answers over a real socket (the Node server) and through the fetch handler: rows written
 * as the transport takes them, the generator ended when the client leaves, a failure after the first
 * row cutting the transfer.
 */
import { request as httpRequest, type IncomingMessage } from "node:http"
import { createFetchHandler, defineServe, type RunningServer, type ServeQueryEvent } from "queryserve"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const ROW_COUNT = 300_000
const PAD = "x".repeat(60)
/** About 100 bytes of JSON per row: 300,000 rows are about 30 MB. */
const rowOf = (id: number) => ({ id, name: `row-${id}`, pad: PAD })

interface Probe {
  pulled: number
  finallyAt: number | undefined
  signalAborted: boolean
}
const probe = (): Probe => ({ pulled: 0, finallyAt: undefined, signalAborted: false })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const makeApi = (probes: Record<string, Probe>, events: Array<ServeQueryEvent>, errors: Array<unknown>) =>
  defineServe({
    queryLogging: (event) => void events.push(event),
    hooks: { onError: ({ error }) => void errors.push(error) },
    queries: {
      big: {
        query: async function*({ ctx }: { ctx: { signal: AbortSignal } }) {
          const seen = (probes.big = probe())
          try {
            for (let id = 0; id < ROW_COUNT; id++) {
              seen.pulled++
              yield rowOf(id)
            }
          } finally {
            seen.finallyAt = performance.now()
            seen.signalAborted = ctx.signal.aborted
          }
        }
      },
      few: async function*() {
        yield { region: "eu", total: 1 }
        yield { region: "us", total: 2 }
        yield { region: "apac", total: 3 }
      },
      none: async function*() {},
      readable: () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue({ n: 1 })
            controller.enqueue({ n: 2 })
            controller.close()
          }
        }),
      failsFirst: async function*() {
        throw new Error("no rows today")
      },
      failsLater: async function*() {
        for (let id = 0; id < 5000; id++) yield rowOf(id)
        throw new Error("the database went away")
      },
      checked: {
        outputSchema: z.array(z.object({ n: z.number() })),
        query: async function*({ input }: { input: { bad?: string } }) {
          yield { n: 1 }
          yield input.bad === undefined ? { n: 2 } : { n: "two" }
        }
      },
      stalls: {
        query: async function*() {
          const seen = (probes.stalls = probe())
          try {
            yield { n: 1 }
            await sleep(2000)
            yield { n: 2 }
          } finally {
            seen.finallyAt = performance.now()
          }
        }
      }
    }
  })

/** A GET whose response is handed over unread (paused). */
const open = (url: string): Promise<{ response: IncomingMessage; destroy: () => number }> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(url, (response) => {
      response.pause()
      resolve({
        response,
        destroy: () => {
          const at = performance.now()
          req.destroy()
          return at
        }
      })
    })
    req.on("error", reject)
    req.end()
  })

const readSome = (response: IncomingMessage, bytes: number): Promise<number> =>
  new Promise((resolve) => {
    let read = 0
    const onData = (chunk: Buffer) => {
      read += chunk.length
      if (read >= bytes) {
        response.off("data", onData)
        response.pause()
        resolve(read)
      }
    }
    response.on("data", onData)
    response.resume()
  })

const until = async (condition: () => boolean, ms = 2000) => {
  const end = performance.now() + ms
  while (!condition() && performance.now() < end) await sleep(5)
}

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

  it("writes JSON, NDJSON and CSV row by row, and [] for no rows", async () => {
    const json = await fetch(url("few"))
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(json.headers.get("content-length")).toBeNull()
    expect(json.headers.get("etag")).toBeNull()
    expect(await json.json()).toEqual([{ region: "eu", total: 1 }, { region: "us", total: 2 }, { region: "apac", total: 3 }])
    expect(await (await fetch(url("few.ndjson"))).text()).toBe(
      '{"region":"eu","total":1}\n{"region":"us","total":2}\n{"region":"apac","total":3}\n'
    )
    expect(await (await fetch(url("few.csv"))).text()).toBe("region,total\r\neu,1\r\nus,2\r\napac,3\r\n")
    expect(await (await fetch(url("none"))).text()).toBe("[]")
    expect(await (await fetch(url("readable"))).json()).toEqual([{ n: 1 }, { n: 2 }])
  })

  it("checks each row against the output schema's items: a row that fails it cuts the transfer", async () => {
    expect(await (await fetch(url("checked"))).json()).toEqual([{ n: 1 }, { n: 2 }])
    const bad = await fetch(url("checked?bad=1"))
    expect(bad.status).toBe(200)
    await expect(bad.text()).rejects.toThrow()
  })

  it("answers an error before the first row with the usual envelope", async () => {
    const response = await fetch(url("failsFirst"))
    expect(response.status).toBe(500)
    expect((await response.json()).error.type).toBeDefined()
  })

  it("cuts the transfer on an error after the first row, and gives the error to onError", async () => {
    errors.length = 0
    const response = await fetch(url("failsLater"))
    expect(response.status).toBe(200)
    await expect(response.text()).rejects.toThrow()
    await until(() => errors.length > 0)
    expect(String(errors[0])).toContain("the database went away")
  })

  it("does not pull a slowly read 300,000-row generator far ahead of the socket, then reads it whole", async () => {
    const { response } = await open(url("big"))
    let received = 0
    // Read 2 MB slowly, 64 KB at a time: the generator stays within the socket's buffers of the reader.
    let furthestAhead = 0
    for (let step = 0; step < 32; step++) {
      received += await readSome(response, 64 * 1024)
      await sleep(10)
      const pulledBytes = probes.big!.pulled * 100
      furthestAhead = Math.max(furthestAhead, pulledBytes - received)
    }
    expect(probes.big!.pulled).toBeLessThan(ROW_COUNT / 2)
    expect(furthestAhead).toBeLessThan(12 * 1024 * 1024)
    // The rest at full speed: every row arrives, and the answer is one JSON array.
    const chunks: Array<Buffer> = []
    const rest = await new Promise<string>((resolve) => {
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve(Buffer.concat(chunks).toString()))
      response.resume()
    })
    expect(rest.endsWith(`{"id":${ROW_COUNT - 1},"name":"row-${ROW_COUNT - 1}","pad":"${PAD}"}]`)).toBe(true)
    await until(() => events.some((event) => event.endpointKey === "big" && event.status === "completed"))
    expect(events.find((event) => event.endpointKey === "big" && event.status === "completed")?.rows).toBe(ROW_COUNT)
  })

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
