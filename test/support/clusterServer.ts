/**
 * `start({ workers: 2 })` run as a program (`node --import tsx clusterServer.ts`): the primary forks two
 * workers that run this same file. The primary prints `ready <port>` once both listen.
 */
import cluster from "node:cluster"
import { defineServe } from "queryserve"

const api = defineServe({ queries: { pid: () => ({ pid: process.pid }) } })
const server = await api.start({ port: 0, hostname: "127.0.0.1", workers: 2 })
if (cluster.isPrimary) process.stdout.write(`ready ${server.port}\n`)
