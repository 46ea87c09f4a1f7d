import { createServer, type AddressInfo, type Server } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { type ClusterProgram, isRunning, startClusterProgram } from "../support/clusterProgram.js"
import { clusterRetrySuite, clusterServer, pidOf, withinMs } from "../support/clusterRetry.js"
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js"


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
    // The workers would listen 60 s after they boot, and a drain would wait 60 s: a stop that waited
    // for either could not end within the 20 s allowed, which a loaded machine cannot stretch an
    // immediate stop to.
    program = startClusterProgram(clusterServer, ["--grace", "60000", "--worker-start-delay", "60000"])
    await program.waitForLines((lines) => lines.filter((line) => line.startsWith("worker ")).length === 2, 20_000)

    program.child.kill("SIGTERM")
    expect(await withinMs(program.exited, 20_000, "the stop")).toEqual({ code: null, signal: "SIGTERM" })
    expect(program.lines.filter((line) => line.startsWith("ready "))).toEqual([])
    for (const pid of program.workerPids()) expect(isRunning(pid)).toBe(false)
  }, 60_000)

  it("rejects start() when a worker cannot listen, even if the program catches the worker's error", async () => {
    blocker = await listenOnFreePort()
    const { port } = blocker.address() as AddressInfo
    program = startClusterProgram(clusterServer, ["--port", String(port), "--catch-start-error"])

    await program.waitForLines((lines) => lines.some((line) => line.startsWith("start failed: ")), 15_000)
    const failure = program.lines.find((line) => line.startsWith("start failed: "))
    expect(failure).toBe(`start failed: A worker could not listen: Port ${port} is already in use on 127.0.0.1: pass another \`port\` to start() (0 picks a free one)`)
    // start() stopped the workers before it rejected: nothing keeps the primary alive.
    expect(await withinMs(program.exited, 5_000, "the primary's exit")).toEqual({ code: 0, signal: null })
    for (const pid of program.workerPids()) expect(isRunning(pid)).toBe(false)
  })
})

// The short run of `npm test`: two failed boots, then recovery; `npm run test:reliability` lets five
// fail and measures that the waits grow.
clusterRetrySuite({ failures: 2, measureWaits: false })
