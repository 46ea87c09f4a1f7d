/**
 * Redis killed and restarted under load. The server process counts two endpoints in a Redis rate-limit
 * store (the documented layer: no offline queue, a short command timeout, reconnection with backoff):
 * one fails open, one fails closed. While Redis is down the first must answer 200 without rate-limit
 * headers and the second 503 SERVICE_UNAVAILABLE; neither may answer anything else, the process may
 * not crash, the failure is logged once per outage and limiter; after the restart both count again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../../support/redisServer.js"
import { figure } from "./report.js"
import { startTarget, type Target } from "./target.js"

export interface RedisOutageSize {
  /** Kill/restart cycles. */
  readonly outages: number
  /** How long each outage lasts, ms. */
  readonly outageMs: number
}

/** Concurrent request loops during the whole run. */
const LOOPS = 20
/** How long after the restart both limiters must count again: the client's reconnect backoff is at most 2 s. */
const RECOVERY_LIMIT_MS = 10_000

/** Hits are judged by the phase they were sent in; during a transition anything but another status is fine. */
type Phase = "healthy" | "outage" | "transition"

interface Hit {
  readonly phase: Phase
  readonly failOpen: boolean
  /** The HTTP status, or the fetch error. */
  readonly status: number | string
  readonly counted: boolean
  readonly type: string | undefined
}

const hit = async (port: number, failOpen: boolean, phase: () => Phase): Promise<Hit> => {
  const during = phase()
  const endpoint = failOpen ? "limitedFailOpen" : "limitedFailClosed"
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/analytics/${endpoint}`)
    const body = (await response.json()) as { error?: { type?: string } }
    return { phase: during, failOpen, status: response.status, counted: response.headers.has("x-ratelimit-limit"), type: body.error?.type }
  } catch (error) {
    return { phase: during, failOpen, status: String(error), counted: false, type: undefined }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves with how long it took until both limiters count again. */
const untilCounting = async (port: number, started: number): Promise<number> => {
  for (;;) {
    const [open, closed] = await Promise.all([hit(port, true, () => "transition"), hit(port, false, () => "transition")])
    if (open.counted && closed.counted) return performance.now() - started
    if (performance.now() - started > RECOVERY_LIMIT_MS) throw new Error(`the limiters did not recover within ${RECOVERY_LIMIT_MS} ms`)
    await sleep(50)
  }
}

export const redisOutageSuite = ({ outages, outageMs }: RedisOutageSize): void => {
  const skip = redisUnavailable()
  describe.skipIf(skip !== undefined)(`Redis killed and restarted under load, ${outages} outages of ${outageMs} ms`, () => {
    let redis: RedisServer
    let target: Target
    beforeAll(async () => {
      redis = await startRedis()
      target = await startTarget({ rows: 1_000, redisUrl: redis.url })
    })
    afterAll(async () => {
      await target?.stop()
      await redis?.stop()
    })

    it("fails open and closed as configured during the outage, never crashes, and counts again after the restart", async () => {
      const port = target.ports().faults
      let phase: Phase = "transition"
      let loading = true
      const hits: Array<Hit> = []
      const loop = async (index: number) => {
        while (loading) hits.push(await hit(port, index % 2 === 0, () => phase))
      }
      const loops = Array.from({ length: LOOPS }, (_, index) => loop(index))
      const recoveries: Array<number> = []
      try {
        await untilCounting(port, performance.now())
        phase = "healthy"
        for (let outage = 0; outage < outages; outage++) {
          await sleep(500)
          phase = "transition"
          // Requests in flight finish before the kill; commands sent just before it wait out their timeout.
          await sleep(100)
          await redis.kill()
          await sleep(600)
          phase = "outage"
          await sleep(outageMs)
          phase = "transition"
          const restarted = performance.now()
          await redis.restart()
          recoveries.push(await untilCounting(port, restarted))
          phase = "healthy"
        }
        await sleep(500)
      } finally {
        loading = false
        await Promise.all(loops)
      }

      const count = (predicate: (hit: Hit) => boolean) => hits.filter(predicate).length
      const during = (phase: Phase, failOpen: boolean) => hits.filter((hit) => hit.phase === phase && hit.failOpen === failOpen)
      const badOpen = during("outage", true).filter((hit) => hit.status !== 200 || hit.counted)
      const badClosed = during("outage", false).filter((hit) => hit.status !== 503 || hit.type !== "SERVICE_UNAVAILABLE")
      const badHealthy = hits.filter((hit) => hit.phase === "healthy" && (hit.status !== 200 || !hit.counted))
      const otherStatuses = count((hit) => hit.status !== 200 && hit.status !== 503)
      const logLines = target.stderr().split("\n").filter((line) => line.startsWith("[queryserve] rate-limit store failed")).length
      figure(
        `redis: ${hits.length} requests over ${outages} outages of ${outageMs} ms; during them fail-open 200×${count((h) => h.phase === "outage" && h.failOpen)} ` +
          `(no rate-limit headers), fail-closed 503×${count((h) => h.phase === "outage" && !h.failOpen)}; counting again ` +
          `${recoveries.map((ms) => Math.round(ms)).join("/")} ms after each restart; ${otherStatuses} other statuses, ` +
          `${badOpen.length + badClosed.length + badHealthy.length} wrong answers, ${logLines} store-failure log lines, ${target.crashes} crashes`
      )
      expect(during("outage", true).length).toBeGreaterThan(0)
      expect(during("outage", false).length).toBeGreaterThan(0)
      expect([badOpen.slice(0, 3), badClosed.slice(0, 3), badHealthy.slice(0, 3)]).toEqual([[], [], []])
      expect([otherStatuses, target.crashes]).toEqual([0, 0])
      // Logged once per outage and limiter, not once per request.
      expect(logLines).toBeLessThanOrEqual(2 * outages)
    })
  })
}
