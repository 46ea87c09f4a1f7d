import { defineServe, serveDev } from "queryserve"
import { afterEach, describe, expect, it, vi } from "vitest"

const makeApi = () =>
  defineServe({
    queries: {
      revenue: () => ({ total: 42 }),
      report: { method: "POST", query: () => Promise.reject(new Error("warehouse offline")) }
    }
  })

/** console.log lines, with the varying parts (port, milliseconds) made stable. */
const captureLog = () => {
  const lines: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    lines.push(...String(args[0]).split("\n").map((line) => line.replace(/:\d+\//g, ":PORT/").replace(/:\d+$/, ":PORT").replace(/\(\d+ms\)/, "(Nms)")))
  })
  return lines
}

describe("serveDev", () => {
  afterEach(() => vi.restoreAllMocks())

  it("prints the endpoint, docs and OpenAPI URLs, then a line per completed or failed request, and stops on abort", async () => {
    const lines = captureLog()
    const controller = new AbortController()
    const server = await serveDev(makeApi(), { port: 0, hostname: "127.0.0.1", signal: controller.signal, handleSignals: false })
    expect(lines).toEqual([
      "queryserve dev server on http://127.0.0.1:PORT",
      "  GET     http://127.0.0.1:PORT/api/analytics/revenue",
      "  POST    http://127.0.0.1:PORT/api/analytics/report",
      "  docs    http://127.0.0.1:PORT/api/analytics/docs",
      "  openapi http://127.0.0.1:PORT/api/analytics/openapi.json"
    ])
    lines.length = 0
    expect(await (await fetch(`${server.url}/api/analytics/revenue`)).json()).toEqual({ total: 42 })
    expect((await fetch(`${server.url}/api/analytics/report`, { method: "POST" })).status).toBe(500)
    expect(lines).toEqual([
      "✓ GET /api/analytics/revenue → 200 (Nms)",
      "✗ POST /api/analytics/report → 500 (Nms) - warehouse offline"
    ])
    controller.abort()
    await expect.poll(() => fetch(`${server.url}/api/analytics/revenue`).then(() => "up", () => "stopped")).toBe("stopped")
  })

  it("prints no banner when quiet, still logs requests, and leaves no listener behind after stop()", async () => {
    const lines = captureLog()
    const api = makeApi()
    const server = await serveDev(api, { port: 0, hostname: "127.0.0.1", quiet: true, handleSignals: false })
    expect(lines).toEqual([])
    await (await fetch(`${server.url}/api/analytics/revenue`)).text()
    expect(lines).toEqual(["✓ GET /api/analytics/revenue → 200 (Nms)"])
    await server.stop()
    expect(api.queryLogger.listenerCount).toBe(0)
  })

  it("leaves docs and OpenAPI out of the banner when they are turned off, and stops at once on an aborted signal", async () => {
    const lines = captureLog()
    const api = defineServe({ queries: { ping: () => "pong" }, openapi: { enabled: false } })
    const server = await serveDev(api, { port: 0, hostname: "127.0.0.1", signal: AbortSignal.abort(), handleSignals: false })
    expect(lines).toEqual(["queryserve dev server on http://127.0.0.1:PORT", "  GET     http://127.0.0.1:PORT/api/analytics/ping"])
    await expect(fetch(`${server.url}/api/analytics/ping`)).rejects.toThrow()
  })
})
