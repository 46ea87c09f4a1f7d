/**
 * `start({ workers: 2 })` with metrics on, run as a program (`node --import tsx metricsClusterServer.ts`):
 * the primary forks two workers that run this same file, and prints `ready <port>` once both listen.
 * `hold` and `exit` keep the worker that serves them from answering the primary: the first busy for
 * 6.5 s (past the primary's 5 s), the second busy for 1.5 s and then gone.
 */
import cluster from "node:cluster"
import { defineServe } from "queryserve"

const busy = (ms: number): void => {
  const end = Date.now() + ms
  while (Date.now() < end);
}

const api = defineServe({
  queries: {
    pid: () => ({ pid: process.pid }),
    hold: () => {
      busy(6_500)
      return { pid: process.pid }
    },
    exit: () => {
      busy(1_500)
      process.exit(1)
    }
  },
  metrics: { public: true }
})
const server = await api.start({ port: 0, hostname: "127.0.0.1", workers: 2 })
if (cluster.isPrimary) process.stdout.write(`ready ${server.port}\n`)
