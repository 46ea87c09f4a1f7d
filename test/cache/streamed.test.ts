/**
 * A streaming endpoint with a TTL under a result cache: its answers are streamed, never stored, and
 * never shared between concurrent requests (a stream is read once), with the memory store and Redis.
 */
import { defineServe, redisResultCacheStore, type RunningServer, type ServeMiddleware } from "queryserve"
import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../support/redisServer.js"

const skipReason = redisUnavailable()
const ROWS = [{ n: 1 }, { n: 2 }, { n: 3 }]
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Store = { readonly name: string; readonly resultCache: () => Promise<true | { store: ReturnType<typeof redisResultCacheStore> }> }

let redis: RedisServer | undefined
let client: ReturnType<typeof createClient> | undefined

const stores: ReadonlyArray<Store> = [
  { name: "memory", resultCache: () => Promise.resolve(true) },
  ...(skipReason === undefined
    ? [{
      name: "redis",
      resultCache: async () => {
        redis ??= await startRedis()
        if (client === undefined) {
          client = createClient({ url: redis.url })
          await client.connect()
        }
        return { store: redisResultCacheStore({ client }) }
      }
    }]
    : [])
]

afterAll(async () => {
  await client?.close()
  await redis?.stop()
})

describe.each(stores)("a streamed answer under the result cache ($name store)", ({ resultCache }) => {
  let server: RunningServer
  const runs = { streamed: 0, slow: 0, wrapped: 0 }
  const passThrough: ServeMiddleware = async (_ctx, next) => next()

  beforeAll(async () => {
    const api = defineServe({
      resultCache: await resultCache(),
      queries: {
        streamed: {
          cacheTtlMs: 60_000,
          query: async function*() {
            runs.streamed++
            yield* ROWS
          }
        },
        // The generator is handed over late: concurrent requests find the first one's run in flight.
        slow: {
          cacheTtlMs: 60_000,
          query: async () => {
            runs.slow++
            await sleep(100)
            return (async function*() {
              yield* ROWS
            })()
          }
        },
        wrapped: {
          cacheTtlMs: 60_000,
          middlewares: [passThrough],
          query: async function*() {
            runs.wrapped++
            yield* ROWS
          }
        }
      }
    })
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true })
  })
  afterAll(() => server?.stop())

  const fetchRows = async (key: string) => {
    const response = await fetch(`${server.url}/api/analytics/${key}`)
    return { status: response.status, chunked: response.headers.get("transfer-encoding"), etag: response.headers.get("etag"), body: await response.text() }
  }

  it("streams every answer and runs the handler for each request", async () => {
    for (const key of ["streamed", "wrapped"] as const) {
      for (let i = 1; i <= 2; i++) {
        const answer = await fetchRows(key)
        expect(answer).toEqual({ status: 200, chunked: "chunked", etag: null, body: JSON.stringify(ROWS) })
        expect(runs[key]).toBe(i)
      }
    }
  })

  it("shares no stream between concurrent requests for one key: each reads all rows of its own", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => fetchRows("slow")))
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: JSON.stringify(ROWS) })
    expect(runs.slow).toBe(4)
  })
})
