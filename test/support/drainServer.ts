/**
 * A server for the SIGTERM drain test, run in its own process (`node --import tsx drainServer.ts`):
 * prints `ready <port>`, then `started` for each slow request it begins.
 */
import { defineServe } from "queryserve"

const api = defineServe({
  queries: {
    slow: () => {
      process.stdout.write("started\n")
      return new Promise((resolve) => setTimeout(() => resolve({ done: true }), 1_000))
    },
    fast: () => ({ fast: true })
  }
})

const server = await api.start({ port: 0, hostname: "127.0.0.1", gracefulShutdownTimeout: 8_000 })
process.stdout.write(`ready ${server.port}\n`)
