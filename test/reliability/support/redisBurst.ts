/**
 * Bursts against the Redis rate limit from several processes on one redis-server. With Redis healthy,
 * `max` requests of a burst pass in all, however many arrive at once (the store deadline does not
 * blame Redis for the processes' own lag). With Redis stopped (SIGSTOP) through a burst, each process
 * counts the window in its own memory: `max` pass per process, never "unlimited".
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../../support/redisServer.js"
import { type ServerProcess, startServerProcess } from "../../support/serverProcess.js"
import { figure } from "./report.js"

export interface RedisBurstSize {
  readonly processes: number
  /** Concurrent requests per burst, spread evenly over the processes. */
  readonly requests: number
  readonly max: number
  /** Healthy bursts in a row, each on a fresh key. */
  readonly runs: number
}

const program = fileURLToPath(new URL("./burstServer.ts", import.meta.url))

interface Tally {
  /** Requests that passed, by the process that answered. */
  readonly passedBy: ReadonlyArray<number>
  readonly statuses: Readonly<Record<string, number>>
  readonly ms: number
}

/** Sends `requests` at once, round robin over the servers, all with the same key. */
const burst = async (servers: ReadonlyArray<ServerProcess>, requests: number, key: string): Promise<Tally> => {
  const started = performance.now()
  const pending = Array.from({ length: requests }, async (_, i) => {
    const server = i % servers.length
    try {
      const response = await fetch(`http://127.0.0.1:${servers[server]!.port}/api/analytics/limited`, { headers: { "x-burst": key } })
      await response.arrayBuffer()
      return { server, status: String(response.status) }
    } catch (error) {
      return { server, status: String(error) }
    }
  })
  const answers = await Promise.all(pending)
  const passedBy = servers.map((_, server) => answers.filter((a) => a.server === server && a.status === "200").length)
  const statuses: Record<string, number> = {}
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1
  return { passedBy, statuses, ms: performance.now() - started }
}

export const redisBurstSuite = ({ processes, requests, max, runs }: RedisBurstSize): void => {
  const skip = redisUnavailable()
  describe.skipIf(skip !== undefined)(`Redis rate limit, ${processes} processes on one Redis, bursts of ${requests} concurrent requests, max ${max}`, () => {
    let redis: RedisServer
    let servers: Array<ServerProcess> = []
    beforeAll(async () => {
      redis = await startRedis()
      servers = await Promise.all(Array.from({ length: processes }, () => startServerProcess(program, [redis.url, String(max)])))
    })
    afterAll(async () => {
      redis?.resume()
      for (const server of servers) server.kill()
      await redis?.stop()
    })

    it(`lets exactly ${max} through with Redis healthy, ${runs} runs in a row`, async () => {
      const tallies: Array<Tally> = []
      for (let run = 0; run < runs; run++) tallies.push(await burst(servers, requests, `healthy-${run}`))
      figure(
        `redis burst: ${runs} bursts of ${requests} concurrent requests over ${processes} processes, max ${max}: passed ` +
          `${tallies.map((t) => t.passedBy.reduce((a, b) => a + b, 0)).join("/")} (${tallies.map((t) => Math.round(t.ms)).join("/")} ms); ` +
          `statuses ${tallies.map((t) => JSON.stringify(t.statuses)).join(" ")}`
      )
      for (const tally of tallies) expect(tally.statuses).toEqual({ 200: max, 429: requests - max })
    })

    it(`lets at most ${max} per process through with Redis stopped (SIGSTOP) through the burst`, async () => {
      let tally: Tally
      // Stopped before the first request leaves: every process meets a store that never answers.
      redis.pause()
      try {
        tally = await burst(servers, requests, "stalled")
      } finally {
        redis.resume()
      }
      figure(
        `redis burst during a SIGSTOP: ${requests} concurrent requests over ${processes} processes, max ${max}: passed ` +
          `${tally.passedBy.join("/")} per process in ${Math.round(tally.ms)} ms; statuses ${JSON.stringify(tally.statuses)}`
      )
      expect(Object.keys(tally.statuses).sort()).toEqual(["200", "429"])
      // Each process counts the window in its own memory: max each, never "unlimited".
      expect(tally.passedBy).toEqual(servers.map(() => max))
    })
  })
}
