import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

const clusterServer = fileURLToPath(new URL("./support/clusterServer.ts", import.meta.url))

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** One request on a fresh connection, so the primary hands each to the next worker. */
const pidOf = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path: "/api/analytics/pid", agent: false, headers: { connection: "close" } }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => (body += chunk.toString()))
      res.on("end", () => resolve((JSON.parse(body) as { pid: number }).pid))
    }).on("error", reject).end()
  })

describe("workers: 2 (node:cluster, server in a child process)", () => {
  let primary: ChildProcess | undefined
  afterEach(() => {
    if (primary !== undefined && primary.exitCode === null && primary.signalCode === null) primary.kill("SIGKILL")
  })

  it("serves from two worker processes on one port and stops them all on SIGTERM", async () => {
    primary = spawn(process.execPath, ["--import", "tsx", clusterServer], { stdio: ["ignore", "pipe", "inherit"] })
    const port = await new Promise<number>((resolve, reject) => {
      let output = ""
      primary!.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        const ready = /ready (\d+)/.exec(output)
        if (ready !== null) resolve(Number(ready[1]))
      })
      primary!.once("exit", (code) => reject(new Error(`primary exited early (${code})`)))
    })
    const pids = new Set<number>()
    for (let i = 0; i < 20 && pids.size < 2; i++) pids.add(await pidOf(port))
    expect(pids.size).toBe(2)
    expect(pids.has(primary.pid!)).toBe(false)

    const exited = new Promise<NodeJS.Signals | null>((resolve) => primary!.once("exit", (_code, signal) => resolve(signal)))
    primary.kill("SIGTERM")
    expect(await exited).toBe("SIGTERM")
    for (const pid of pids) await expect.poll(() => isAlive(pid)).toBe(false)
  })
})
