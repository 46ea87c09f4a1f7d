/**
 * A `workers` cluster whose replacement workers cannot boot: the primary retries them with growing
 * waits while the surviving worker serves, and a retry serves again once booting works. `npm test`
 * runs a short functional version; `npm run test:reliability` lets more boots fail and measures that
 * the waits grow, a timing that a busy machine can blur in the short run.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type ClusterProgram, isRunning, startClusterProgram } from "./clusterProgram.js"
import { getOnFreshConnection } from "./freshConnection.js"

export const clusterServer = fileURLToPath(new URL("./clusterServer.ts", import.meta.url))

/** The pid of the worker that answers a request on a fresh connection. */
export const pidOf = async (port: number): Promise<number> =>
  (JSON.parse((await getOnFreshConnection(port, "/api/analytics/pid")).body) as { pid: number }).pid

export const withinMs = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))])

export interface ClusterRetrySize {
  /** Boots that fail in a row before booting works again. */
  readonly failures: number
  /** Whether to assert that the waits between failed boots grow (needs `failures` ≥ 5). */
  readonly measureWaits: boolean
}

export const clusterRetrySuite = ({ failures, measureWaits }: ClusterRetrySize): void => {
  describe(`workers: 2, a worker that cannot boot ${failures} times in a row`, () => {
    let program: ClusterProgram | undefined
    afterEach(() => {
      program?.kill()
      program = undefined
    })

    it("is retried with growing waits, the other worker serves meanwhile, and a retry recovers", async () => {
      const dir = mkdtempSync(join(tmpdir(), "queryserve-cluster-"))
      const failBoot = join(dir, "fail-boot")
      try {
        program = startClusterProgram(clusterServer, ["--fail-boot-while", failBoot])
        await program.waitForLines((lines) => lines.some((line) => line.startsWith("ready ")), 20_000)
        const port = Number(program.lines.find((line) => line.startsWith("ready "))!.slice("ready ".length))
        const [first, second] = program.workerPids()

        // A worker dies young, and its replacements cannot boot: each retry waits twice as long as the
        // one before (0.1 s, then 0.2, 0.4, …), while the other worker serves and the primary lives on.
        writeFileSync(failBoot, "")
        process.kill(first!, "SIGKILL")
        const failedAt: Array<number> = []
        for (let failed = 1; failed <= failures; failed++) {
          await program.waitForLines((lines) => lines.filter((line) => line.startsWith("boot failed ")).length >= failed, 20_000)
          failedAt.push(performance.now())
          expect(await pidOf(port)).toBe(second)
        }
        if (measureWaits) {
          const gaps = failedAt.slice(1).map((at, i) => at - failedAt[i]!)
          // Waits of 0.2 s and 1.6 s before the first and the fourth gap's boot: 1.4 s apart, whatever a boot takes.
          expect(gaps[3]! - gaps[0]!).toBeGreaterThan(700)
        }
        expect(isRunning(program.child.pid!)).toBe(true)

        // Once workers can boot again, the next retry serves beside the survivor.
        rmSync(failBoot)
        await program.waitForLines(() => program!.workerPids().length === 2 + failures + 1, 20_000)
        const recovered = program.workerPids().at(-1)!
        const pids = new Set<number>()
        await expect.poll(async () => {
          pids.add(await pidOf(port))
          return [...pids].sort()
        }, { timeout: 15_000 }).toEqual([second, recovered].sort())

        program.child.kill("SIGTERM")
        expect(await withinMs(program.exited, 10_000, "the stop")).toEqual({ code: null, signal: "SIGTERM" })
        for (const pid of program.workerPids()) await expect.poll(() => isRunning(pid)).toBe(false)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 90_000)
  })
}
