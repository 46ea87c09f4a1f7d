/** The API the streaming tests serve on each transport, and helpers to read its answers slowly or leave early. */
import { request as httpRequest, type IncomingMessage } from "node:http"
import { defineServe, type ServeQueryEvent } from "queryserve"
import { expect } from "vitest"
import { z } from "zod"

export const ROW_COUNT = 300_000
export const PAD = "x".repeat(60)
/** About 100 bytes of JSON per row: 300,000 rows are about 30 MB. */
export const rowOf = (id: number) => ({ id, name: `row-${id}`, pad: PAD })

export interface Probe {
  pulled: number
  finallyAt: number | undefined
  signalAborted: boolean
}
export const probe = (): Probe => ({ pulled: 0, finallyAt: undefined, signalAborted: false })

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const makeApi = (probes: Record<string, Probe>, events: Array<ServeQueryEvent>, errors: Array<unknown>) =>
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
export const open = (url: string): Promise<{ response: IncomingMessage; destroy: () => number }> =>
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

export const readSome = (response: IncomingMessage, bytes: number): Promise<number> =>
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

export const until = async (condition: () => boolean, ms = 2000) => {
  const end = performance.now() + ms
  while (!condition() && performance.now() < end) await sleep(5)
}


/**
 * Reads `url` (the 300,000-row `big`) slowly, 2 MB in steps of 64 KB, then the rest at full speed:
 * how far the generator got ahead of the reader, and the whole body.
 */
export const readBigSlowly = async (url: string, probes: Record<string, Probe>): Promise<{ pulledWhileSlow: number; furthestAhead: number; body: string }> => {
  const { response } = await open(url)
  let received = 0
  let furthestAhead = 0
  for (let step = 0; step < 32; step++) {
    received += await readSome(response, 64 * 1024)
    await sleep(10)
    furthestAhead = Math.max(furthestAhead, probes.big!.pulled * 100 - received)
  }
  const pulledWhileSlow = probes.big!.pulled
  const chunks: Array<Buffer> = []
  const body = await new Promise<string>((resolve) => {
    response.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.on("end", () => resolve(Buffer.concat(chunks).toString()))
    response.resume()
  })
  return { pulledWhileSlow, furthestAhead, body }
}

/** The end of a complete JSON answer of `big`. */
export const BIG_JSON_END = `{"id":${ROW_COUNT - 1},"name":"row-${ROW_COUNT - 1}","pad":"${PAD}"}]`

/** A server of the API on a socket, and what its API recorded. */
export interface StreamingServer {
  readonly url: (path: string) => string
  /** What onError was given. */
  readonly errors: Array<unknown>
  readonly events: Array<ServeQueryEvent>
  readonly probes: Record<string, Probe>
}

/** What a server streaming the API over a socket answers, whichever serves it. */
export const SOCKET_CHECKS: ReadonlyArray<readonly [name: string, check: (server: StreamingServer) => Promise<void>]> = [
  ["writes JSON, NDJSON and CSV row by row, chunked, and [] for no rows", async ({ url }) => {
    const json = await fetch(url("few"))
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(json.headers.get("content-length")).toBeNull()
    expect(json.headers.get("transfer-encoding")).toBe("chunked")
    expect(json.headers.get("etag")).toBeNull()
    expect(await json.json()).toEqual([{ region: "eu", total: 1 }, { region: "us", total: 2 }, { region: "apac", total: 3 }])
    expect(await (await fetch(url("few.ndjson"))).text()).toBe(
      '{"region":"eu","total":1}\n{"region":"us","total":2}\n{"region":"apac","total":3}\n'
    )
    const csv = await fetch(url("few"), { headers: { accept: "text/csv" } })
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(await csv.text()).toBe("region,total\r\neu,1\r\nus,2\r\napac,3\r\n")
    expect(await (await fetch(url("few.csv"))).text()).toBe("region,total\r\neu,1\r\nus,2\r\napac,3\r\n")
    expect(await (await fetch(url("none"))).text()).toBe("[]")
    expect(await (await fetch(url("readable"))).json()).toEqual([{ n: 1 }, { n: 2 }])
  }],
  ["checks each row against the output schema's items: a row that fails it cuts the transfer", async ({ url }) => {
    expect(await (await fetch(url("checked"))).json()).toEqual([{ n: 1 }, { n: 2 }])
    const bad = await fetch(url("checked?bad=1"))
    expect(bad.status).toBe(200)
    await expect(bad.text()).rejects.toThrow()
  }],
  ["answers an error before the first row with the usual envelope", async ({ url }) => {
    const response = await fetch(url("failsFirst"))
    expect(response.status).toBe(500)
    expect((await response.json()).error.type).toBeDefined()
  }],
  ["cuts the transfer on an error after the first row, and gives the error to onError", async ({ url, errors }) => {
    errors.length = 0
    const response = await fetch(url("failsLater"))
    expect(response.status).toBe(200)
    await expect(response.text()).rejects.toThrow()
    await until(() => errors.length > 0)
    expect(String(errors[0])).toContain("the database went away")
  }],
  ["does not pull a slowly read 300,000-row generator far ahead of the socket, then sends it whole", async ({ url, events, probes }) => {
    events.length = 0
    const { pulledWhileSlow, furthestAhead, body } = await readBigSlowly(url("big"), probes)
    // The generator stays within the socket's buffers of the reader.
    expect(pulledWhileSlow).toBeLessThan(ROW_COUNT / 2)
    expect(furthestAhead).toBeLessThan(12 * 1024 * 1024)
    // Read at full speed, every row arrives, and the answer is one JSON array.
    expect(body.endsWith(BIG_JSON_END)).toBe(true)
    await until(() => events.some((event) => event.endpointKey === "big" && event.status === "completed"))
    expect(events.find((event) => event.endpointKey === "big" && event.status === "completed")?.rows).toBe(ROW_COUNT)
  }]
]
