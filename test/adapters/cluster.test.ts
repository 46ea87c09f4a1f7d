import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { getOnFreshConnection } from "../support/freshConnection.js"
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js"

const clusterServer = fileURLToPath(new URL("../support/clusterServer.ts", import.meta.url))

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const pidOf = async (port: number): Promise<number> =>
  (JSON.parse((await getOnFreshConnection(port, "/api/analytics/pid")).body) as { pid: number }).pid

describe("workers: 2 (node:cluster, server in a child process)", () => {
  let primary: ServerProcess | undefined
  afterEach(() => primary?.kill())

  it("serves from two worker processes on one port and stops them all on SIGTERM", async () => {
    primary = await startServerProcess(clusterServer)
    const pids = new Set<number>()
    for (let i = 0; i < 20 && pids.size < 2; i++) pids.add(await pidOf(primary.port))
    expect(pids.size).toBe(2)
    expect(pids.has(primary.child.pid!)).toBe(false)

    primary.child.kill("SIGTERM")
    expect(await primary.exited).toBe("SIGTERM")
    for (const pid of pids) await expect.poll(() => isAlive(pid)).toBe(false)
  })
})
