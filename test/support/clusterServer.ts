/**
 * `start({ workers: 2 })` run as a program (`node --import tsx clusterServer.ts [options]`): the primary forks
 * two workers that run this same file (with the same options). Each worker prints `worker <pid>` as it boots;
 * the primary prints `ready <port>` once both listen, or `start failed: <message>` with `--catch-start-error`.
 * Options: `--port <n>`, `--grace <ms>` (gracefulShutdownTimeout), `--worker-start-delay <ms>` (before the
 * workers' start()), `--catch-start-error` (the program catches start()'s error and lives on),
 * `--fail-boot-while <file>` (a worker booting while the file exists prints `boot failed <pid>` and exits 1).
 */
import cluster from "node:cluster"
import { existsSync } from "node:fs"
import { setTimeout as sleep } from "node:timers/promises"
import { parseArgs } from "node:util"
import { defineServe } from "queryserve"

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    grace: { type: "string" },
    "worker-start-delay": { type: "string", default: "0" },
    "catch-start-error": { type: "boolean", default: false },
    "fail-boot-while": { type: "string" }
  }
})

const api = defineServe({ queries: { pid: () => ({ pid: process.pid }) } })
const options = {
  port: Number(values.port),
  hostname: "127.0.0.1",
  workers: 2,
  ...(values.grace === undefined ? {} : { gracefulShutdownTimeout: Number(values.grace) })
}

if (cluster.isWorker) {
  process.stdout.write(`worker ${process.pid}\n`)
  const failBootWhile = values["fail-boot-while"]
  if (failBootWhile !== undefined && existsSync(failBootWhile)) {
    process.stdout.write(`boot failed ${process.pid}\n`)
    process.exit(1)
  }
  await sleep(Number(values["worker-start-delay"]))
}
try {
  const server = await api.start(options)
  if (cluster.isPrimary) process.stdout.write(`ready ${server.port}\n`)
} catch (error) {
  if (!values["catch-start-error"]) throw error
  if (cluster.isPrimary) process.stdout.write(`start failed: ${(error as Error).message}\n`)
}
