/**
 * `start({ workers: 2 })` with metrics on, run as a program (`node --import tsx metricsClusterServer.ts`):
 * the primary forks two workers that run this same file, and prints `ready <port>` once both listen.
 */
import cluster from "node:cluster"
import { defineServe } from "queryserve"

const api = defineServe({ queries: { pid: () => ({ pid: process.pid }) }, metrics: { public: true } })
const server = await api.start({ port: 0, hostname: "127.0.0.1", workers: 2 })
if (cluster.isPrimary) process.stdout.write(`ready ${server.port}\n`)
