/**
 * Redis stalled under load (run by the Redis outage suite, on its servers): the test's own redis-server
 * is stopped with SIGSTOP (alive, connections open, commands accepted and never answered) and continued
 * with SIGCONT. Every request, during a stall or not, must be answered within the store deadline plus a
 * margin; during a stall with 200 without rate-limit headers (fail open) or 503 SERVICE_UNAVAILABLE
 * (fail closed); after it both limiters count again.
 */
import { expect } from "vitest"
import type { RedisServer } from "../../support/redisServer.js"
import {
  countedAfterRecovery,
  expiredWhileHealthy,
  type FailureWindow,
  type Hit,
  isWrong,
  sleep,
  startLoad,
  STORE_DEADLINE_MS,
  untilCounting
} from "./limiterHits.js"
import { figure } from "./report.js"
import type { Target } from "./target.js"

export interface RedisStallSize {
  readonly stalls: number
  /** How long each stall lasts, ms. */
  readonly stallMs: number
  /**
   * "strict" (the long run): every answer within the deadline plus a margin, and a hit sent in a stall
   * never counted. "tolerant" (`npm test`, which must pass beside CPU-bound processes): no latency
   * bound, and a hit sent in a stall may be counted once Redis continues (see `countedAfterRecovery`).
   */
  readonly timing: "strict" | "tolerant"
}

/**
 * What a loaded 2-core machine may add to the deadline (processes there are descheduled for a second at
 * times): 1 s, or 40 % of a longer stall. Deadline plus margin stays well below the stall, which is how
 * long an answer waited before.
 */
const marginFor = (stallMs: number): number => Math.max(1_000, Math.round(stallMs * 0.4))

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

export const stallUnderLoad = async (redis: RedisServer, target: Target, { stalls, stallMs, timing }: RedisStallSize): Promise<void> => {
  const port = target.ports().faults
  const MARGIN_MS = marginFor(stallMs)
  await untilCounting(port)
  const load = startLoad(port)
  load.phase = "healthy"
  const stopped: Array<FailureWindow> = []
  let hits: ReadonlyArray<Hit>
  try {
    for (let stall = 0; stall < stalls; stall++) {
      await sleep(500)
      // Hits in flight when Redis stops wait out their deadline: the ones sent just before are not judged exactly.
      load.phase = "transition"
      await sleep(50)
      const from = performance.now()
      redis.pause()
      load.phase = "failing"
      try {
        await sleep(stallMs - STORE_DEADLINE_MS - 100)
        // A hit sent from here on may be answered by Redis after it continues, within its deadline.
        load.phase = "transition"
        await sleep(STORE_DEADLINE_MS + 100)
      } finally {
        load.phase = "transition"
        redis.resume()
        stopped.push([from, performance.now()])
      }
      await sleep(STORE_DEADLINE_MS + MARGIN_MS)
      await untilCounting(port)
      load.phase = "healthy"
    }
    await sleep(300)
  } finally {
    hits = await load.stop()
  }

  const tolerated = (h: Hit) => timing === "tolerant" && countedAfterRecovery(h, stopped)
  const wrong = hits.filter((h) => isWrong(h) && !tolerated(h))
  const late = hits.filter((h) => h.ms > STORE_DEADLINE_MS + MARGIN_MS)
  const sentInStall = hits.filter((h) => stopped.some(([from, to]) => h.sentAt >= from && h.sentAt < to))
  const latencies = sentInStall.map((h) => h.ms)
  const statuses = new Map<string, number>()
  for (const h of sentInStall) {
    const key = `${h.failOpen ? "fail-open" : "fail-closed"} ${h.status}`
    statuses.set(key, (statuses.get(key) ?? 0) + 1)
  }
  const failing = hits.filter((h) => h.phase === "failing")
  figure(
    `redis stall: ${hits.length} requests, ${sentInStall.length} sent during ${stalls} SIGSTOP stalls of ${stallMs} ms; ` +
      `their latency p50 ${Math.round(percentile(latencies, 50))} ms, p99 ${Math.round(percentile(latencies, 99))} ms, ` +
      `max ${Math.round(Math.max(0, ...latencies))} ms (store deadline ${STORE_DEADLINE_MS} ms + margin ${MARGIN_MS} ms); ` +
      `their statuses ${[...statuses].map(([key, n]) => `${key}×${n}`).join(", ")} (a fail-closed 200 was sent in a stall's last ` +
      `${STORE_DEADLINE_MS} ms and answered by Redis in time); ${late.length} requests late, ${wrong.length} wrong answers, ` +
      `${target.crashes} crashes; ${expiredWhileHealthy(hits)} requests outside the stalls passed the deadline on the loaded machine` +
      (timing === "tolerant" ? `; ${hits.filter((h) => isWrong(h) && tolerated(h)).length} sent in a stall were counted once Redis continued` : "")
  )
  expect(failing.filter((h) => h.failOpen).length).toBeGreaterThan(0)
  expect(failing.filter((h) => !h.failOpen).length).toBeGreaterThan(0)
  expect(wrong.slice(0, 3)).toEqual([])
  if (timing === "strict") expect(late.slice(0, 3)).toEqual([])
  expect(target.crashes).toBe(0)
}
