/**
 * One server process of the Redis burst suite (`node --import tsx burstServer.ts <redisUrl> <max>`):
 * an endpoint behind `rateLimit` on the Redis layer, keyed by the `x-burst` header, with `max` per
 * 60 s window. Prints `ready <port>` once Redis answers.
 */
import { ManagedRuntime } from "effect"
import { defineServe, rateLimit, RateLimitStore, redisRateLimitStoreLayer, startNodeServer } from "queryserve"

const [redisUrl, max] = process.argv.slice(2)
const runtime = ManagedRuntime.make(redisRateLimitStoreLayer({ url: redisUrl! }))
const store = await runtime.runPromise(RateLimitStore)
// The layer does not wait for Redis: the program does, so that the test's first burst meets a connected store.
for (;;) {
  try {
    await store.getTtl("probe")
    break
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const api = defineServe({
  queries: {
    limited: {
      query: () => ({ pid: process.pid }),
      middlewares: [rateLimit({ store, max: Number(max), windowMs: 60_000, keyBy: (ctx) => String(ctx.request.headers?.["x-burst"]) })]
    }
  }
})
const server = await startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1" })
process.stdout.write(`ready ${server.port}\n`)
