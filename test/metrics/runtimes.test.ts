/** Metrics on Bun and Deno: prom-client loads through their Node compatibility and counts the same. */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { parseExposition, valueOf } from "../support/prometheus.js"
import { findTestBinary } from "../support/testBinaries.js"

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SCRIPT = "test/support/metricsRuntime.ts"

const RUNTIMES = [
  { name: "Bun", binary: findTestBinary("Bun", "@oven/bun-linux-x64/bin/bun"), args: [SCRIPT] },
  { name: "Deno", binary: findTestBinary("Deno", "@deno/linux-x64-glibc/deno"), args: ["run", "-A", "--unstable-sloppy-imports", SCRIPT] }
]

describe("metrics: true on other runtimes", () => {
  for (const runtime of RUNTIMES) {
    it.skipIf(runtime.binary === undefined)(`${runtime.name}: the scrape counts the request and has the process metrics`, async () => {
      const { stdout } = await run(runtime.binary!, runtime.args, { cwd: ROOT, timeout: 60_000 })
      const scrape = JSON.parse(stdout.trim().split("\n").pop()!) as { status: number; contentType: string; body: string }
      expect(scrape.status).toBe(200)
      expect(scrape.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
      const metrics = parseExposition(scrape.body)
      expect(valueOf(metrics, "queryserve_requests_total", { endpoint: "hello", method: "GET", status: "200" })).toBe(1)
      expect(metrics.types.get("process_cpu_user_seconds_total")).toBe("counter")
    })
  }
})
