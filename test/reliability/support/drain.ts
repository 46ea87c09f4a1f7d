/**
 * SIGTERM under load: 200 keep-alive connections send requests (DuckDB queries, and 300 ms handlers
 * so that some are always in flight; some clients pause between requests) when the server process
 * gets SIGTERM. The
 * server logs the id of every request node:http hands it; a request is lost when it was admitted
 * and its connection then closed or reset without a complete answer. There must be none, and every
 * request sent before the signal must be answered: 200, or 503 when it arrived after the drain began.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { METRIC_CASES } from "../../demo/support/references.js"
import { figure } from "./report.js"
import { startTarget, type Target } from "./target.js"
import { TENANT_IDS, TENANT_KEYS } from "./targetConfig.js"

export interface DrainSize {
  /** Server processes started and stopped by SIGTERM under load, one after the other. */
  readonly cycles: number
  /** Milliseconds of load before the signal. */
  readonly loadMs: number
}

const CONNECTIONS = 200

type Outcome =
  | { readonly answered: true; readonly status: number; readonly connectionClose: boolean }
  | { readonly answered: false; readonly code: string }

interface Sent {
  readonly id: string
  readonly beforeSignal: boolean
  readonly outcome: Outcome
}

const call = (agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<Outcome> =>
  new Promise((resolve) => {
    const request = httpRequest({ agent, host: "127.0.0.1", port, path, headers }, (response) => {
      response.resume()
      response.on("end", () =>
        resolve({ answered: true, status: response.statusCode ?? 0, connectionClose: response.headers.connection === "close" }))
      response.on("error", (error: NodeJS.ErrnoException) => resolve({ answered: false, code: error.code ?? error.message }))
    })
    request.on("error", (error: NodeJS.ErrnoException) => resolve({ answered: false, code: error.code ?? error.message }))
    request.end()
  })

const demoPaths = Object.values(METRIC_CASES)
  .filter((metric) => metric.endpoint !== "tenantsOverview")
  .map((metric) => `/api/analytics/${metric.endpoint}?${new URLSearchParams(Object.entries(metric.input).map(([k, v]) => [k, String(v)]))}`)

interface CycleResult {
  readonly sent: ReadonlyArray<Sent>
  readonly admitted: ReadonlySet<string>
  readonly exit: { code: number | null; signal: NodeJS.Signals | null }
  readonly drainMs: number
}

/** One server process, loaded by CONNECTIONS clients, then SIGTERM. */
const cycle = async (cycleIndex: number, loadMs: number, dir: string): Promise<CycleResult> => {
  const admittedLog = join(dir, `admitted-${cycleIndex}.log`)
  // The slow endpoint takes 300 ms: the fault API's default 400 ms deadline would turn a loaded box's
  // scheduling delays into 504s, which say nothing about draining.
  const target: Target = await startTarget({ rows: 5_000, admittedLog, faultRequestTimeout: 5_000 }, { restart: false })
  const { demo, faults } = target.ports()
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const sent: Array<Sent> = []
  let signalled = false
  let running = true

  /** One client: requests back to back until its connection is refused (the server stopped listening). */
  const client = async (index: number): Promise<void> => {
    const tenant = TENANT_IDS[index % TENANT_IDS.length]!
    for (let n = 0; running; n++) {
      const id = `c${cycleIndex}.${index}.${n}`
      const slow = index % 4 === 0
      const path = slow ? "/api/analytics/slow?ms=300" : demoPaths[(index + n) % demoPaths.length]!
      const beforeSignal = !signalled
      const outcome = await call(agent, slow ? faults : demo, path, { "x-request-id": id, "x-api-key": TENANT_KEYS[tenant] })
      sent.push({ id, beforeSignal, outcome })
      if (!outcome.answered && outcome.code === "ECONNREFUSED") return
      // Some clients pause, so that their keep-alive connection is idle when the signal comes and their
      // next request arrives while the server drains.
      if (index % 4 === 1) await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }

  const clients = Array.from({ length: CONNECTIONS }, (_, index) => client(index))
  await new Promise((resolve) => setTimeout(resolve, loadMs))
  signalled = true
  const signalledAt = performance.now()
  const exit = await target.signal("SIGTERM")
  const drainMs = performance.now() - signalledAt
  running = false
  await Promise.all(clients)
  agent.destroy()
  const admitted = new Set(readFileSync(admittedLog, "utf8").split("\n").filter((line) => line.length > 0))
  return { sent, admitted, exit, drainMs }
}

export const drainSuite = ({ cycles, loadMs }: DrainSize): void => {
  describe(`SIGTERM under ${CONNECTIONS} connections, ${cycles} cycles`, () => {
    const dir = mkdtempSync(join(tmpdir(), "queryserve-drain-"))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    it("loses no admitted request and answers every request sent before the signal (200, or 503 once draining)", async () => {
      const results: Array<CycleResult> = []
      for (let i = 0; i < cycles; i++) results.push(await cycle(i, loadMs, dir))
      const sent = results.flatMap((result) => result.sent)
      const admitted = new Set(results.flatMap((result) => [...result.admitted]))
      const count = (predicate: (entry: Sent) => boolean) => sent.filter(predicate).length
      const status = (entry: Sent) => (entry.outcome.answered ? entry.outcome.status : undefined)
      const lost = sent.filter((entry) => !entry.outcome.answered && admitted.has(entry.id))
      const unansweredBeforeSignal = count((entry) => entry.beforeSignal && !entry.outcome.answered)
      const others = sent.flatMap((entry) => {
        const code = status(entry)
        return code !== undefined && code !== 200 && code !== 503 ? [code] : []
      })
      const otherStatuses = others.length
      const refused = count((entry) => !entry.outcome.answered && entry.outcome.code === "ECONNREFUSED")
      const closedUnread = count((entry) => !entry.outcome.answered && entry.outcome.code !== "ECONNREFUSED" && !admitted.has(entry.id))
      figure(
        `SIGTERM under ${CONNECTIONS} connections × ${cycles} cycles: ${sent.length} requests, ` +
          `${count((entry) => entry.beforeSignal)} sent before the signal (${unansweredBeforeSignal} unanswered), ` +
          `200×${count((entry) => status(entry) === 200)}, 503×${count((entry) => status(entry) === 503)} (drain begun), ` +
          `${otherStatuses} other statuses${otherStatuses > 0 ? ` (${others.join(" ")})` : ""}, ${refused} refused after close, ${closedUnread} closed before being read, ${lost.length} lost; ` +
          `drained and exited in ${results.map((result) => Math.round(result.drainMs)).join("/")} ms`
      )
      expect(lost.map((entry) => entry.id)).toEqual([])
      expect([unansweredBeforeSignal, otherStatuses]).toEqual([0, 0])
      // Every 503 says the connection closes; the process ends the way SIGTERM ends it, once drained.
      expect(sent.filter((entry) => status(entry) === 503 && !(entry.outcome.answered && entry.outcome.connectionClose))).toEqual([])
      for (const result of results) expect(result.exit).toEqual({ code: null, signal: "SIGTERM" })
    })
  })
}
