/**
 * Two APIs in one program served by `start({ workers: 2 })` through one handler: `/open` serves its
 * metrics publicly, `/closed` only to a caller with the `ops` role. Run as a program like
 * metricsClusterServer.ts; the primary prints `ready <port>` once both workers listen.
 */
import cluster from "node:cluster"
import { apiKeyAuth, defineServe, type ServeRequest, startNodeServer } from "queryserve"

const open = defineServe({ basePath: "/open", queries: { ping: () => ({ pid: process.pid }) }, metrics: { public: true } })
const closed = defineServe({
  basePath: "/closed",
  auth: apiKeyAuth({ header: "x-api-key", keys: { "ops-key": { roles: ["ops"] }, "user-key": { roles: ["user"] } } }),
  queries: { secretReport: () => ({ pid: process.pid }) },
  metrics: { roles: ["ops"] }
})
const handler = (request: ServeRequest) => (request.path.startsWith("/open/") ? open.handler(request) : closed.handler(request))
const server = await startNodeServer(handler, { port: 0, hostname: "127.0.0.1", workers: 2 })
if (cluster.isPrimary) process.stdout.write(`ready ${server.port}\n`)
