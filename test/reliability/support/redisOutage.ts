/**
 * Redis killed and restarted under load. The server process counts two endpoints in a Redis rate-limit
 * store (the documented layer: no offline queue, a short command timeout, reconnection with backoff):
 * one fails open, one fails closed. While Redis is down the first must answer 200 without rate-limit
 * headers and the second 503 SERVICE_UNAVAILABLE; neither may answer anything else, the process may
 * not crash, the failure is logged once per outage and limiter; after the restart both count again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../../support/redisServer.js"
import { countedAfterRecovery, expiredWhileHealthy, type FailureWindow, type Hit, isWrong, sleep, startLoad, untilCounting } from "./limiterHits.js"
import { type RedisStallSize, stallUnderLoad } from "./redisStall.js"
import { figure } from "./report.js"
import { startTarget, type Target } from "./target.js"

export interface RedisOutageSize {
  /** Kill/restart cycles. */
  readonly outages: number
  /** How long each outage lasts, ms. */
  readonly outageMs: number
  /** SIGSTOP/SIGCONT cycles (see redisStall.ts), run before the outages on the same servers. */
  readonly stall: Omit<RedisStallSize, "timing">
  /** As RedisStallSize's `timing`, for the stalls and the outages: "tolerant" in `npm test`. */
  readonly timing: "strict" | "tolerant"
}

/** How long after the restart both limiters must count again: the client's reconnect backoff is at most 2 s. */
const RECOVERY_LIMIT_MS = 10_000

export const redisOutageSuite = ({ outages, outageMs, stall, timing }: RedisOutageSize): void => {
  const skip = redisUnavailable()
  describe.skipIf(skip !== undefined)(`Redis stalled, then killed and restarted, under load: ${stall.stalls} stalls of ${stall.stallMs} ms, ${outages} outages of ${outageMs} ms`, () => {
    let redis: RedisServer
    let target: Target
    beforeAll(async () => {
      redis = await startRedis()
      // The fault API's 400 ms request timeout serves its hanging endpoints; here a loaded machine can make Node's
      // own receive timeout (the same value) answer 408 to a kept-alive request, which says nothing about Redis.
      target = await startTarget({ rows: 1_000, redisUrl: redis.url, faultRequestTimeout: 5_000 })
    })
    afterAll(async () => {
      await target?.stop()
      await redis?.stop()
    })

    it("answers within the store deadline while Redis is stopped (SIGSTOP), fail-open and fail-closed as configured", () =>
      stallUnderLoad(redis, target, { ...stall, timing }))

    it("fails open and closed as configured during the outage, never crashes, and counts again after the restart", async () => {
      const port = target.ports().faults
      // Only this test's log lines count (the stall test ran on the same server before).
      const logStart = target.stderr().length
      await untilCounting(port, RECOVERY_LIMIT_MS)
      const load = startLoad(port)
      load.phase = "healthy"
      const recoveries: Array<number> = []
      const down: Array<FailureWindow> = []
      let hits: ReadonlyArray<Hit>
      try {
        for (let outage = 0; outage < outages; outage++) {
          await sleep(500)
          load.phase = "transition"
          // Requests in flight finish before the kill; commands sent just before it wait out their deadline.
          await sleep(100)
          const killedAt = performance.now()
          await redis.kill()
          await sleep(600)
          load.phase = "failing"
          await sleep(outageMs)
          load.phase = "transition"
          await redis.restart()
          down.push([killedAt, performance.now()])
          recoveries.push(await untilCounting(port, RECOVERY_LIMIT_MS))
          load.phase = "healthy"
        }
        await sleep(500)
      } finally {
        hits = await load.stop()
      }

      const during = (failOpen: boolean) => hits.filter((h) => h.phase === "failing" && h.failOpen === failOpen)
      const tolerated = (h: Hit) => timing === "tolerant" && countedAfterRecovery(h, down)
      const wrong = hits.filter((h) => isWrong(h) && !tolerated(h))
      const otherStatuses = hits.filter((h) => h.status !== 200 && h.status !== 503).length
      const logLines = target.stderr().slice(logStart).split("\n").filter((line) => line.startsWith("[queryserve] rate-limit store failed")).length
      figure(
        `redis: ${hits.length} requests over ${outages} outages of ${outageMs} ms; during them fail-open 200×${during(true).length} ` +
          `(no rate-limit headers), fail-closed 503×${during(false).length}; counting again ` +
          `${recoveries.map((ms) => Math.round(ms)).join("/")} ms after each restart; ${otherStatuses} other statuses, ` +
          `${wrong.length} wrong answers, ${logLines} store-failure log lines, ${target.crashes} crashes; ` +
          `${expiredWhileHealthy(hits)} requests with Redis up passed the store deadline on the loaded machine` +
          (timing === "tolerant" ? `; ${hits.filter((h) => isWrong(h) && tolerated(h)).length} sent in the outage were counted once Redis was back` : "")
      )
      expect(during(true).length).toBeGreaterThan(0)
      expect(during(false).length).toBeGreaterThan(0)
      expect(wrong.slice(0, 3)).toEqual([])
      expect([otherStatuses, target.crashes]).toEqual([0, 0])
      // Logged once per outage and limiter (plus once per stretch of deadlines a loaded machine let pass), not once per request.
      expect(logLines).toBeLessThanOrEqual(2 * outages + expiredWhileHealthy(hits))
    })
  })
}
