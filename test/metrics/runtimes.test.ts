/**
 * Metrics on Bun and Deno, where prom-client loads through their Node compatibility and counts the
 * same, and in a process where prom-client cannot be loaded at all.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { parseExposition, valueOf } from "../support/prometheus.js"
import { findTestBinary } from "../support/testBinaries.js"

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SCRIPT = "test/support/metricsRuntime.ts"

// Each case starts a runtime (and compiles TypeScript): generous deadlines for a busy box.
const RUNTIMES = [
  { name: "Bun", binary: findTestBinary("Bun", "@oven/bun-linux-x64/bin/bun"), args: [SCRIPT] },
  { name: "Deno", binary: findTestBinary("Deno", "@deno/linux-x64-glibc/deno"), args: ["run", "-A", "--unstable-sloppy-imports", SCRIPT] }
]

interface Printed {
  readonly helloStatus: number
  readonly status: number
  readonly contentType: string
  readonly body: string
}

const lastLine = (stdout: string): Printed => JSON.parse(stdout.trim().split("\n").pop()!) as Printed

describe("metrics: true on other runtimes", () => {
  for (const runtime of RUNTIMES) {
    it.skipIf(runtime.binary === undefined)(`${runtime.name}: the scrape counts the request and has the process metrics`, async () => {
      const { stdout } = await run(runtime.binary!, runtime.args, { cwd: ROOT, timeout: 60_000 })
      const scrape = lastLine(stdout)
      expect(scrape.helloStatus).toBe(200)
      expect(scrape.status).toBe(200)
      expect(scrape.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
      const metrics = parseExposition(scrape.body)
      expect(valueOf(metrics, "queryserve_requests_total", { endpoint: "hello", method: "GET", status: "200" })).toBe(1)
      expect(metrics.types.get("process_cpu_user_seconds_total")).toBe("counter")
    }, 90_000)
  }

  it("without prom-client the endpoints still answer, the scrape is 503 and the cause is logged once", async () => {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "--import", "./test/support/withoutPromClient.mjs", SCRIPT], {
      cwd: ROOT,
      timeout: 60_000
    })
    const printed = lastLine(stdout)
    expect(printed.helloStatus).toBe(200)
    expect(printed.status).toBe(503)
    expect(JSON.parse(printed.body)).toEqual({
      error: { type: "SERVICE_UNAVAILABLE", message: "Metrics are unavailable: prom-client could not be loaded on this runtime" }
    })
    expect(stderr.match(/\[queryserve\] metrics are off: prom-client could not be loaded/g)).toHaveLength(1)
  }, 90_000)
})
