import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type AddressInfo, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type ClusterProgram, isRunning, startClusterProgram } from "../support/clusterProgram.js"
import { getOnFreshConnection } from "../support/freshConnection.js"
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js"

const clusterServer = fileURLToPath(new URL("../support/clusterServer.ts", import.meta.url))

const pidOf = async (port: number): Promise<number> =>
  (JSON.parse((await getOnFreshConnection(port, "/api/analytics/pid")).body) as { pid: number }).pid

const withinMs = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))])

const listenOnFreePort = (): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve(server))
  })

describe("workers: 2 (node:cluster, server in a child process)", () => {
  let primary: ServerProcess | undefined
  let program: ClusterProgram | undefined
  let blocker: Server | undefined
  afterEach(() => {
    primary?.kill()
    program?.kill()
    blocker?.close()
    primary = program = blocker = undefined
  })

  it("serves from two worker processes on one port and stops them all on SIGTERM", async () => {
    primary = await startServerProcess(clusterServer)
    const pids = new Set<number>()
    for (let i = 0; i < 20 && pids.size < 2; i++) pids.add(await pidOf(primary.port))
    expect(pids.size).toBe(2)
    expect(pids.has(primary.child.pid!)).toBe(false)

    primary.child.kill("SIGTERM")
    expect(await primary.exited).toBe("SIGTERM")
    for (const pid of pids) await expect.poll(() => isRunning(pid)).toBe(false)
  })

  it("SIGTERM while the workers start: ends them at once, and start() does not resolve", async () => {
    // The workers listen 1 s after they boot, well before gracefulShutdownTimeout + 2 s would kill them.
    program = startClusterProgram(clusterServer, ["--grace", "1000", "--worker-start-delay", "1000"])
    await program.waitForLines((lines) => lines.filter((line) => line.startsWith("worker ")).length === 2, 20_000)

    const sentAt = performance.now()
    program.child.kill("SIGTERM")
    expect(await withinMs(program.exited, 10_000, "the stop")).toEqual({ code: null, signal: "SIGTERM" })
    expect(performance.now() - sentAt).toBeLessThan(1500)
    expect(program.lines.filter((line) => line.startsWith("ready "))).toEqual([])
    for (const pid of program.workerPids()) expect(isRunning(pid)).toBe(false)
  })

  it("rejects start() when a worker cannot listen, even if the program catches the worker's error", async () => {
    blocker = await listenOnFreePort()
    const { port } = blocker.address() as AddressInfo
    program = startClusterProgram(clusterServer, ["--port", String(port), "--catch-start-error"])

    await program.waitForLines((lines) => lines.some((line) => line.startsWith("start failed: ")), 15_000)
    const failure = program.lines.find((line) => line.startsWith("start failed: "))
    expect(failure).toMatch(/^start failed: A worker could not listen: .*EADDRINUSE/)
    // start() stopped the workers before it rejected: nothing keeps the primary alive.
    expect(await withinMs(program.exited, 5_000, "the primary's exit")).toEqual({ code: 0, signal: null })
    for (const pid of program.workerPids()) expect(isRunning(pid)).toBe(false)
  })

  it("retries a worker that cannot boot with growing waits, keeps serving meanwhile, and recovers", async () => {
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
      for (let failed = 1; failed <= 5; failed++) {
        await program.waitForLines((lines) => lines.filter((line) => line.startsWith("boot failed ")).length >= failed, 20_000)
        failedAt.push(performance.now())
        expect(await pidOf(port)).toBe(second)
      }
      const gaps = failedAt.slice(1).map((at, i) => at - failedAt[i]!)
      // Waits of 0.2 s and 1.6 s before the first and the last gap's boot: 1.4 s apart, whatever a boot takes.
      expect(gaps[3]! - gaps[0]!).toBeGreaterThan(700)
      expect(isRunning(program.child.pid!)).toBe(true)

      // Once workers can boot again, the next retry serves beside the survivor.
      rmSync(failBoot)
      await program.waitForLines(() => program!.workerPids().length === 2 + 5 + 1, 20_000)
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
