/**
 * A server process sharing its result cache through Redis. Usage: cacheServer <redisUrl>.
 * `report` (cached, 60 s) answers after 50 ms and counts its runs; `runs` (uncached) tells the count.
 * Prints `ready <port>`.
 */
import { defineServe, redisResultCacheStore } from "queryserve"

const url = process.argv[2]
if (url === undefined) throw new Error("usage: cacheServer <redisUrl>")
let runs = 0
const api = defineServe({
  resultCache: { store: redisResultCacheStore({ url }) },
  queries: {
    report: {
      cacheTtlMs: 60_000,
      query: ({ input }: { input: { id?: string } }) =>
        new Promise((resolve) => setTimeout(() => resolve({ id: input.id ?? "-", run: ++runs, pid: process.pid }), 50))
    },
    runs: () => ({ runs })
  }
})
const server = await api.start({ port: 0, hostname: "127.0.0.1" })
process.stdout.write(`ready ${server.port}\n`)
