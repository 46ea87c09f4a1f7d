/**
 * Pipelined HTTP/1.1 requests on one connection run one at a time: the next request's handler starts
 * only once the answer before it is finished, and the answers come back in order.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createNodeHandler, defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { openConnection, statusLines } from "../support/rawHttp.js"

const COUNT = 5

const makeApi = () => {
  const seen = { running: 0, most: 0, started: [] as Array<number> }
  const api = defineServe({
    queries: {
      slow: {
        inputSchema: z.object({ n: z.coerce.number() }),
        query: async ({ input }: { input: { n: number } }) => {
          seen.started.push(input.n)
          seen.most = Math.max(seen.most, ++seen.running)
          await new Promise((resolve) => setTimeout(resolve, 40))
          seen.running--
          return { n: input.n }
        }
      }
    }
  })
  return { api, seen }
}

const pipelined = (count: number): string =>
  Array.from({ length: count }, (_, n) => `GET /api/analytics/slow?n=${n} HTTP/1.1\r\nHost: t\r\n\r\n`).join("")

describe.each(["start", "handler"] as const)("pipelined requests (%s)", (kind) => {
  const { api, seen } = makeApi()
  let running: RunningServer | undefined
  let server: Server | undefined
  let port: number

  beforeAll(async () => {
    if (kind === "start") {
      running = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true })
      port = running.port
    } else {
      server = createServer(createNodeHandler(api.handler))
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
      port = (server.address() as AddressInfo).port
    }
  })
  afterAll(async () => {
    await running?.stop()
    if (server !== undefined) {
      server.closeAllConnections()
      await new Promise((resolve) => server!.close(resolve))
    }
  })

  it("runs a connection's pipelined requests strictly one after another, answering all in order", async () => {
    const connection = await openConnection(port)
    // All five in one write: node:http parses them at once.
    connection.write(pipelined(COUNT))
    const text = await connection.readUntil((received) => statusLines(received).length === COUNT && received.endsWith("}"))
    expect(statusLines(text)).toEqual(Array(COUNT).fill("HTTP/1.1 200 OK"))
    expect([...text.matchAll(/\{"n":(\d+)\}/g)].map((match) => Number(match[1]))).toEqual([0, 1, 2, 3, 4])
    expect(seen.started).toEqual([0, 1, 2, 3, 4])
    expect(seen.most).toBe(1)
    connection.destroy()
  })

  it("still runs requests of different connections at once", async () => {
    seen.most = 0
    const connections = await Promise.all([openConnection(port), openConnection(port)])
    for (const connection of connections) connection.write(pipelined(1))
    await Promise.all(connections.map((connection) => connection.readUntil((received) => received.endsWith("}"))))
    expect(seen.most).toBe(2)
    for (const connection of connections) connection.destroy()
  })
})
