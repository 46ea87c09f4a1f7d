/**
 * rowBatches: rows that arrive in batches (a DuckDB chunk, a Postgres FETCH) answer exactly what the
 * same rows one by one answer, in every format, checked against the output schema batch by batch;
 * a client leaving ends the batches' iteration, and in process they are rows again.
 */
import * as Schema from "effect/Schema"
import { defineServe, rowBatches, type RunningServer, type ServeQueryEvent } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const Row = Schema.Struct({ id: Schema.Int, name: Schema.String, price: Schema.Number })
type Row = typeof Row.Type
const rowOf = (id: number): Row => ({ id, name: `item, "${id}"`, price: id / 4 })

/** Sizes that include an empty batch and a batch of one. */
const SIZES = [3, 0, 1, 2048, 5, 700]
const TOTAL = SIZES.reduce((sum, size) => sum + size, 0)

async function* batchesOf(sizes: ReadonlyArray<number>, rowAt: (id: number) => unknown = rowOf) {
  let id = 0
  for (const size of sizes) {
    const batch: Array<unknown> = []
    for (let i = 0; i < size; i++) batch.push(rowAt(id++))
    yield batch
  }
}

async function* oneByOne() {
  for (let id = 0; id < TOTAL; id++) yield rowOf(id)
}

const leaving = { finallyRan: false, signalAborted: false, batchesRead: 0 }
const events: Array<ServeQueryEvent> = []
const errors: Array<unknown> = []

const api = defineServe({
  queryLogging: (event) => void events.push(event),
  hooks: { onError: ({ error }) => void errors.push(error) },
  queries: {
    batched: { outputSchema: Schema.Array(Row), query: () => rowBatches(batchesOf(SIZES)) },
    single: { outputSchema: Schema.Array(Row), query: oneByOne },
    unchecked: { query: () => rowBatches(batchesOf(SIZES)) },
    readable: {
      outputSchema: Schema.Array(Row),
      query: () =>
        rowBatches(
          new ReadableStream<ReadonlyArray<Row>>({
            start(controller) {
              controller.enqueue([rowOf(0), rowOf(1)])
              controller.enqueue([rowOf(2)])
              controller.close()
            }
          })
        )
    },
    badFirst: { outputSchema: Schema.Array(Row), query: () => rowBatches(batchesOf([4], (id) => (id === 2 ? { id: "two" } : rowOf(id)))) },
    badLater: { outputSchema: Schema.Array(Row), query: () => rowBatches(batchesOf([2048, 2048, 10], (id) => (id === 4100 ? { id: 1.5 } : rowOf(id)))) },
    notABatch: { query: () => rowBatches((async function*() {
      yield [rowOf(0)]
      yield rowOf(1) as unknown as ReadonlyArray<Row>
    })()) },
    endless: {
      query: ({ ctx }: { ctx: { signal: AbortSignal } }) =>
        rowBatches((async function*() {
          try {
            for (let id = 0; ; id += 2048) {
              leaving.batchesRead++
              yield Array.from({ length: 2048 }, (_, i) => rowOf(id + i))
            }
          } finally {
            leaving.finallyRan = true
            leaving.signalAborted = ctx.signal.aborted
          }
        })())
    }
  }
})

let server: RunningServer
const url = (path: string) => `http://127.0.0.1:${server.port}/api/analytics/${path}`

beforeAll(async () => {
  server = await api.start({ port: 0, hostname: "127.0.0.1", quiet: true, handleSignals: false })
})

afterAll(async () => {
  await server?.stop()
})

describe("rows given in batches", () => {
  it.each(["", ".csv", ".ndjson"])("answer what the same rows one by one answer (%s)", async (suffix) => {
    const [batched, single] = await Promise.all([fetch(url(`batched${suffix}`)), fetch(url(`single${suffix}`))])
    expect(batched.status).toBe(200)
    expect(batched.headers.get("content-type")).toBe(single.headers.get("content-type"))
    const text = await batched.text()
    expect(text).toBe(await single.text())
    if (suffix === "") expect(JSON.parse(text)).toHaveLength(TOTAL)
  })

  it("count every row in the completed event, and read a ReadableStream of batches", async () => {
    events.length = 0
    await (await fetch(url("batched"))).text()
    expect(await (await fetch(url("readable"))).json()).toEqual([rowOf(0), rowOf(1), rowOf(2)])
    expect(events.filter((event) => event.status === "completed").map((event) => event.rows)).toEqual([TOTAL, 3])
  })

  it("check each batch against the output schema: a bad row before the answer began is the usual 500", async () => {
    const response = await fetch(url("badFirst"))
    expect(response.status).toBe(500)
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("INTERNAL_SERVER_ERROR")
  })

  it("cut the transfer on a bad row in a later batch, and give the error to onError", async () => {
    errors.length = 0
    const response = await fetch(url("badLater"))
    expect(response.status).toBe(200)
    await expect(response.text()).rejects.toThrow()
    expect(String(errors[0])).toMatch(/Output failed validation/)
  })

  it("refuse an item that is not an array of rows, cutting the transfer", async () => {
    errors.length = 0
    const response = await fetch(url("notABatch.ndjson"))
    await expect(response.text()).rejects.toThrow()
    expect(String(errors[0])).toMatch(/not an array of rows/)
  })

  it("end the batches' iteration when the client leaves: their finally runs and ctx.signal aborts", async () => {
    const controller = new AbortController()
    const response = await fetch(url("endless.csv"), { signal: controller.signal })
    const reader = response.body!.getReader()
    await reader.read()
    controller.abort()
    const deadline = performance.now() + 5000
    while (!leaving.finallyRan && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(leaving.finallyRan).toBe(true)
    expect(leaving.signalAborted).toBe(true)
    // Pulled as the socket takes them: a few batches, not the endless rest.
    expect(leaving.batchesRead).toBeLessThan(200)
  })

  it("are rows again in process: execute gives them one by one, unchecked too", async () => {
    for (const key of ["batched", "unchecked"] as const) {
      const rows: Array<unknown> = []
      for await (const row of (await api.execute(key)) as AsyncIterable<unknown>) rows.push(row)
      expect(rows).toHaveLength(TOTAL)
      expect(rows[TOTAL - 1]).toEqual(rowOf(TOTAL - 1))
    }
  })

  it("as a plain async iterable give the rows one by one; leaving early ends the batches", async () => {
    let ended = false
    const source = rowBatches((async function*() {
      try {
        yield [1, 2]
        yield [3, 4]
        yield [5]
      } finally {
        ended = true
      }
    })())
    const seen: Array<number> = []
    for await (const value of source) {
      seen.push(value)
      if (value === 3) break
    }
    expect(seen).toEqual([1, 2, 3])
    expect(ended).toBe(true)
  })
})
