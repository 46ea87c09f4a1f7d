import { fc, test } from "@fast-check/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { defineServe, formatQueryEvent, formatQueryEventJSON, ServeHttpError, type ServeQueryEvent } from "queryserve"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { turnEnd, writtenLogLines } from "../support/logLines.js"

const START = new Date("2025-06-01T12:00:00.000Z")

/** Handlers that take a fixed time on the fake clock. */
const queries = {
  revenue: () => {
    vi.advanceTimersByTime(12)
    return { total: 1 }
  },
  broken: () => {
    vi.advanceTimersByTime(3)
    throw new Error("warehouse offline")
  },
  denied: () => {
    throw new ServeHttpError(403, "FORBIDDEN", "not yours")
  },
  slow: () => {
    vi.advanceTimersByTime(1_234)
    return []
  }
}

const get = (api: { handler: (request: { method: string; path: string; headers: Record<string, string> }) => unknown }, key: string) =>
  Promise.resolve(api.handler({ method: "GET", path: `/api/analytics/${key}`, headers: { "x-request-id": `req-${key}` } }))

describe("query logs with a fixed clock", () => {
  let log: ReturnType<typeof vi.spyOn>
  let warn: ReturnType<typeof vi.spyOn>
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date", "performance"], now: START })
    log = vi.spyOn(console, "log").mockImplementation(() => {})
    warn = vi.spyOn(console, "warn").mockImplementation(() => {})
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.restoreAllMocks()
  })
  const logged = () => writtenLogLines(log)

  it("writes the text format for queryLogging: true", async () => {
    const api = defineServe({ queries, queryLogging: true })
    await get(api, "revenue")
    await get(api, "broken")
    await get(api, "denied")
    expect(await logged()).toEqual([
      "✓ GET /api/analytics/revenue → 200 (12ms)",
      "✗ GET /api/analytics/broken → 500 (3ms) - warehouse offline",
      "✗ GET /api/analytics/denied → 403 (0ms) - not yours"
    ])
  })

  it("writes one JSON object per line for queryLogging: 'json'", async () => {
    const api = defineServe({ queries, queryLogging: "json" })
    await get(api, "revenue")
    await get(api, "broken")
    expect(await logged()).toEqual([
      '{"level":"info","msg":"GET /api/analytics/revenue","requestId":"req-revenue","endpoint":"revenue","status":200,"durationMs":12,"timestamp":"2025-06-01T12:00:00.012Z"}',
      '{"level":"error","msg":"GET /api/analytics/broken","requestId":"req-broken","endpoint":"broken","status":500,"durationMs":3,"timestamp":"2025-06-01T12:00:00.015Z","error":"warehouse offline"}'
    ])
  })

  it("hands every event to a callback, started ones included", async () => {
    const events: Array<ServeQueryEvent> = []
    const api = defineServe({ queries, queryLogging: (event) => events.push(event) })
    await get(api, "revenue")
    expect(events.map((event) => [event.status, event.responseStatus, event.durationMs])).toEqual([
      ["started", undefined, undefined],
      ["completed", 200, 12]
    ])
    expect(events[1]).toMatchObject({ requestId: "req-revenue", endpointKey: "revenue", method: "GET", result: { total: 1 } })
    await turnEnd()
    expect(log).not.toHaveBeenCalled()
  })

  it("warns about slow queries on its own, with or without queryLogging", async () => {
    const quiet = defineServe({ queries, slowQueryThreshold: 1_000 })
    await get(quiet, "slow")
    await get(quiet, "revenue")
    expect(warn.mock.calls.map((call) => call[0])).toEqual(["[slow-query] GET /api/analytics/slow (slow) took 1234ms (threshold: 1000ms)"])
    await turnEnd()
    expect(log).not.toHaveBeenCalled()
    const both = defineServe({ queries, queryLogging: true, slowQueryThreshold: 1_000 })
    await get(both, "slow")
    expect(warn).toHaveBeenCalledTimes(2)
    expect(await logged()).toEqual(["✓ GET /api/analytics/slow → 200 (1234ms)"])
  })

  // Alone, the built-in lines are written from the pipeline's facts without events; a listener of
  // yours makes the pipeline build events again, which the same lines are then formatted from.
  it.each([true, "json"] as const)("writes the same lines with or without events being built (queryLogging: %s, slow-query warnings)", async (queryLogging) => {
    const run = async (withListener: boolean) => {
      log.mockClear()
      warn.mockClear()
      vi.setSystemTime(START)
      const seen: Array<string> = []
      const api = defineServe({ queries, queryLogging, slowQueryThreshold: 1_000, metrics: { public: true } })
      if (withListener) api.queryLogger.on((event) => void seen.push(event.status))
      expect(api.queryLogger.meter === undefined).toBe(withListener)
      for (const key of ["revenue", "broken", "denied", "slow"]) await get(api, key)
      await api.dispose()
      return { lines: await logged(), warnings: warn.mock.calls.map((call) => call[0]), seen }
    }
    const direct = await run(false)
    const fromEvents = await run(true)
    expect(fromEvents.seen).toHaveLength(8)
    expect(direct.lines).toHaveLength(4)
    expect(direct.warnings).toEqual(["[slow-query] GET /api/analytics/slow (slow) took 1234ms (threshold: 1000ms)"])
    expect(direct).toEqual({ ...fromEvents, seen: [] })
  })

  it("writes the lines of one event-loop turn in one console.log, in the order the requests ended", async () => {
    const api = defineServe({ queries, queryLogging: true })
    await Promise.all([get(api, "revenue"), get(api, "denied"), get(api, "slow")])
    expect(log).not.toHaveBeenCalled()
    await turnEnd()
    expect(log.mock.calls).toEqual([[
      "✓ GET /api/analytics/revenue → 200 (12ms)\n✗ GET /api/analytics/denied → 403 (0ms) - not yours\n✓ GET /api/analytics/slow → 200 (1234ms)"
    ]])
  })

  it("does not hold back more than 256 lines when calls never let the event loop turn", async () => {
    const api = defineServe({ queries, queryLogging: "json" })
    for (let i = 0; i < 300; i++) await get(api, "revenue")
    expect(log.mock.calls.map((call) => String(call[0]).split("\n").length)).toEqual([256])
    expect(await logged()).toHaveLength(300)
  })

  it("reports a console.log that throws, and the process goes on", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {})
    log.mockImplementation(() => {
      throw new Error("stdout is gone")
    })
    const api = defineServe({ queries, queryLogging: true })
    await get(api, "revenue")
    await turnEnd()
    expect(log).toHaveBeenCalledTimes(1)
    expect(error).toHaveBeenCalledWith("[queryserve] writing query log lines failed", new Error("stdout is gone"))
  })

  it("registers no listener when neither option is set", () => {
    expect(defineServe({ queries }).queryLogger.listenerCount).toBe(0)
    expect(defineServe({ queries, slowQueryThreshold: 10 }).queryLogger.listenerCount).toBe(1)
  })
})

describe("formatQueryEvent / formatQueryEventJSON", () => {
  const base = { requestId: "r1", endpointKey: "revenue", path: "/api/analytics/revenue", method: "GET", startTime: START.getTime() }

  it("return null for started events", () => {
    expect(formatQueryEvent({ ...base, status: "started" })).toBeNull()
    expect(formatQueryEventJSON({ ...base, status: "started" })).toBeNull()
  })

  it("keep a text line on one line: control characters in an error message or path are written as escapes", () => {
    const forged = "line1\n✓ GET /api/analytics/forged → 200 (1ms)"
    const event: ServeQueryEvent = {
      ...base,
      path: "/api/analytics/a\u2028b",
      status: "error",
      durationMs: 1,
      responseStatus: 500,
      error: new Error(`${forged}\r\tand\u0085more`)
    }
    expect(formatQueryEvent(event)).toBe(
      "✗ GET /api/analytics/a\\u2028b → 500 (1ms) - line1\\n✓ GET /api/analytics/forged → 200 (1ms)\\r\\tand\\u0085more"
    )
  })

  it("round the duration: whole ms in text, 0.01 ms in JSON", () => {
    const event: ServeQueryEvent = { ...base, status: "completed", durationMs: 12.3456, endTime: START.getTime() + 12.3456, responseStatus: 200 }
    expect(formatQueryEvent(event)).toBe("✓ GET /api/analytics/revenue → 200 (12ms)")
    expect(JSON.parse(formatQueryEventJSON(event)!)).toMatchObject({ durationMs: 12.35, timestamp: "2025-06-01T12:00:00.012Z" })
  })

  // The JSON line is written by hand for speed: it must be exactly what JSON.stringify writes for its fields.
  test.prop([
    fc.record({
      path: fc.string({ unit: "binary", maxLength: 40 }),
      requestId: fc.string({ unit: "binary", maxLength: 40 }),
      endpointKey: fc.string({ unit: "binary", maxLength: 20 }),
      message: fc.string({ unit: "binary", maxLength: 40 }),
      durationMs: fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.constantFrom(0, 0.004, 0.005, 0.1, 1.1, 12.34, 99.999)),
      responseStatus: fc.integer({ min: 100, max: 599 }),
      failed: fc.boolean(),
      cacheHit: fc.constantFrom(true, false, undefined),
      transport: fc.constantFrom("http" as const, "mcp" as const, undefined)
    })
  ], { numRuns: 500 })("formatQueryEventJSON writes what JSON.stringify writes", (e) => {
    const event: ServeQueryEvent = {
      ...base,
      path: e.path,
      requestId: e.requestId,
      endpointKey: e.endpointKey,
      status: e.failed ? "error" : "completed",
      durationMs: e.durationMs,
      endTime: START.getTime() + e.durationMs,
      responseStatus: e.responseStatus,
      error: e.failed ? new Error(e.message) : undefined,
      cacheHit: e.cacheHit,
      transport: e.transport
    }
    expect(formatQueryEventJSON(event)).toBe(JSON.stringify({
      level: e.failed ? "error" : "info",
      msg: `GET ${e.path}`,
      requestId: e.requestId,
      endpoint: e.endpointKey,
      status: e.responseStatus,
      durationMs: Math.round(e.durationMs * 100) / 100,
      cacheHit: e.cacheHit,
      timestamp: new Date(Math.floor(START.getTime() + e.durationMs)).toISOString(),
      transport: e.transport === "mcp" ? "mcp" : undefined,
      error: e.failed ? e.message : undefined
    }))
  })
})

describe("lines held back when the process ends", () => {
  const ROOT = fileURLToPath(new URL("../..", import.meta.url))
  const probe = fileURLToPath(new URL("./support/exitProbe.ts", import.meta.url))

  it.each(["exit", "throw"])("are written on process.exit and on an uncaught error (%s)", async (ending) => {
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      execFile(process.execPath, ["--import", "tsx", probe, ending], { cwd: ROOT, timeout: 60_000 }, (error, stdout) => {
        if (error !== null && typeof error.code !== "number") reject(error)
        else resolve({ code: error === null ? 0 : Number(error.code), stdout })
      })
    })
    expect(result.code).toBe(ending === "exit" ? 0 : 1)
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { requestId: string; status: number })
    expect(lines).toEqual([expect.objectContaining({ requestId: "last-words", status: 200 })])
  })
})
