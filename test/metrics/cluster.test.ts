/**
 * `workers: 2` in a child process: requests spread over both workers, and a scrape answered by either
 * worker counts all of them (prom-client's cluster aggregation through the primary).
 */
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { getOnFreshConnection } from "../support/freshConnection.js"
import { parseExposition, valueOf } from "../support/prometheus.js"
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js"

const server = fileURLToPath(new URL("../support/metricsClusterServer.ts", import.meta.url))

const REQUESTS = 24

describe("metrics with workers: 2 (node:cluster, server in a child process)", () => {
  let primary: ServerProcess | undefined
  afterEach(() => primary?.kill())

  it("answers every scrape, on whichever worker, with the sum over both workers", async () => {
    primary = await startServerProcess(server)
    const pids = new Set<number>()
    for (let i = 0; i < REQUESTS; i++) {
      const answer = await getOnFreshConnection(primary.port, "/api/analytics/pid")
      expect(answer.status).toBe(200)
      pids.add((JSON.parse(answer.body) as { pid: number }).pid)
    }
    // Both workers served: a scrape of one worker alone would count about half.
    expect(pids.size).toBe(2)

    // Consecutive connections go to alternate workers, so these scrapes land on both.
    for (let i = 0; i < 4; i++) {
      const scrape = await getOnFreshConnection(primary.port, "/api/analytics/metrics")
      expect(scrape.status).toBe(200)
      const metrics = parseExposition(scrape.body)
      expect(valueOf(metrics, "queryserve_requests_total", { endpoint: "pid", method: "GET", status: "200" })).toBe(REQUESTS)
      expect(valueOf(metrics, "queryserve_request_duration_seconds_count", { endpoint: "pid" })).toBe(REQUESTS)
      expect(valueOf(metrics, "queryserve_in_flight_requests")).toBe(0)
      expect(metrics.types.get("process_cpu_user_seconds_total")).toBe("counter")
    }

    primary.child.kill("SIGTERM")
    expect(await primary.exited).toBe("SIGTERM")
    // Three tsx processes start here: on a busy 2-core box that alone can take over 30 s.
  }, 120_000)
})
