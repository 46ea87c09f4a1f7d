/**
 * Soak: 100 connections of steady traffic (autocannon) over every tenant, endpoint and both auth
 * strategies, GET and POST, against the server process. No error, no non-2xx answer, and flat
 * memory: the server's RSS and its heap after a full GC, sampled during the run, must not grow
 * after the warm-up.
 */
import autocannon from "autocannon"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { METRIC_CASES } from "../../demo/support/references.js"
import { figure } from "./report.js"
import { type Memory, startTarget, type Target } from "./target.js"
import { TENANT_IDS, TENANT_KEYS } from "./targetConfig.js"
import { signTokens } from "./tokens.js"

export interface SoakSize {
  readonly seconds: number
  /** Seconds at the start that only warm up (caches, JIT, DuckDB's buffers); memory is compared after them. */
  readonly warmUpSeconds: number
  /**
   * Whether RSS growth is asserted. Over a few seconds RSS still follows DuckDB's buffers and the
   * allocator's warm-up (CI saw +72 MiB in 3 s on a busy box, then flat), so only a long run can
   * tell a leak from that; the short run asserts the heap after GC and prints RSS.
   */
  readonly assertRss: boolean
}

const CONNECTIONS = 100
const MiB = 1024 * 1024

/** Heap growth after GC that would mean a leak (a retained object per request grows far faster). */
const MAX_HEAP_GROWTH = 8 * MiB
/** RSS also holds DuckDB's buffers and the allocator's slack: a looser bound, for growth that never stops. */
const MAX_RSS_GROWTH = 64 * MiB

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`

/** The traffic: each tenant's key and token on every tenant endpoint, as GET and as POST where there is a route. */
const soakRequests = async (): Promise<Array<autocannon.Request>> => {
  const tokens = await signTokens()
  const requests: Array<autocannon.Request> = []
  for (const tenant of TENANT_IDS) {
    const credentials = [{ "x-api-key": TENANT_KEYS[tenant] }, { authorization: `Bearer ${tokens.tenant[tenant]}` }]
    for (const metric of Object.values(METRIC_CASES)) {
      if (metric.endpoint === "tenantsOverview") continue
      const query = new URLSearchParams(Object.entries(metric.input).map(([key, value]) => [key, String(value)]))
      for (const headers of credentials) {
        requests.push({ method: "GET", path: `/api/analytics/${metric.endpoint}?${query}`, headers })
      }
      if (metric.endpoint === "revenueByRegion" || metric.endpoint === "topProducts") {
        requests.push({
          method: "POST",
          path: `/api/analytics/${metric.endpoint}`,
          headers: { ...credentials[0], "content-type": "application/json" },
          body: JSON.stringify(metric.input)
        })
      }
    }
  }
  return requests
}

export const soakSuite = ({ seconds, warmUpSeconds, assertRss }: SoakSize): void => {
  describe(`soak: ${seconds} s at ${CONNECTIONS} connections`, () => {
    let target: Target
    beforeAll(async () => {
      // A small dataset: the soak is about the server, not about how fast DuckDB aggregates.
      target = await startTarget({ rows: 5_000 })
    })
    afterAll(() => target?.stop())

    it("answers everything 2xx with no error, and memory stays flat after the warm-up", async () => {
      const requests = await soakRequests()
      const samples: Array<{ readonly at: number; readonly memory: Memory }> = []
      const started = performance.now()
      const sampler = setInterval(
        () => void target.memory().then((memory) => samples.push({ at: (performance.now() - started) / 1000, memory })),
        Math.max(500, (seconds * 1000) / 12)
      )
      const result = await autocannon({ url: `http://127.0.0.1:${target.ports().demo}`, connections: CONNECTIONS, duration: seconds, requests })
      clearInterval(sampler)
      const after = samples.filter((sample) => sample.at >= warmUpSeconds)
      const first = after[0]!.memory
      const last = after[after.length - 1]!.memory
      // RSS swings by tens of MiB either way (allocator slack, DuckDB's buffers) while the heap stays
      // flat: growth that never stops shows in the lowest reading of the last third, a swing does not.
      const lastThird = after.slice(Math.floor((after.length * 2) / 3))
      const settledRss = Math.min(...lastThird.map((sample) => sample.memory.rss))
      const rssGrowth = settledRss - first.rss
      const heapGrowth = last.heapUsed - first.heapUsed
      figure(
        `soak: ${seconds} s × ${CONNECTIONS} connections, ${result.requests.total} requests (${Math.round(result.requests.average)}/s, ` +
          `p99 ${result.latency.p99} ms), ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx; ` +
          `after ${warmUpSeconds} s warm-up RSS ${mib(first.rss)} → ${mib(last.rss)} (lowest of the last third Δ ${mib(rssGrowth)}), ` +
          `heap after GC ${mib(first.heapUsed)} → ${mib(last.heapUsed)} (Δ ${mib(heapGrowth)}), ${target.crashes} crashes`
      )
      // Only that the soak was one: 100 connections of demo queries over DuckDB keep the server busy at
      // 200-odd answers a second alone, about half that beside another test file (speed is the bench's).
      expect(result.requests.total).toBeGreaterThan(seconds * 40)
      expect([result.errors, result.timeouts, result.non2xx, target.crashes]).toEqual([0, 0, 0, 0])
      expect(after.length).toBeGreaterThanOrEqual(2)
      expect(heapGrowth).toBeLessThan(MAX_HEAP_GROWTH)
      if (assertRss) expect(rssGrowth).toBeLessThan(MAX_RSS_GROWTH)
    })
  })
}
