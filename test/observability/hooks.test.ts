import { defineServe, type RunningServer, type ServeLifecycleHooks } from "queryserve"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"

type Call = readonly [hook: string, payload: Record<string, unknown>]

const recordingHooks = (calls: Array<Call>): ServeLifecycleHooks => ({
  onRequestStart: (event) => void calls.push(["onRequestStart", event]),
  onRequestEnd: (event) => void calls.push(["onRequestEnd", event]),
  onError: (event) => void calls.push(["onError", event]),
  onAuthFailure: (event) => void calls.push(["onAuthFailure", event])
})

const failure = new Error("warehouse offline")
const queries = {
  revenue: () => ({ total: 7 }),
  broken: () => Promise.reject(failure),
  secret: { auth: () => null, requiresAuth: true, query: () => "hidden" }
}

describe("lifecycle hooks over a real server", () => {
  const calls: Array<Call> = []
  const api = defineServe({ queries, hooks: recordingHooks(calls) })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())
  afterEach(() => void (calls.length = 0))
  const get = (key: string) => fetch(`${server.url}/api/analytics/${key}`, { headers: { "x-request-id": `h-${key}` } })

  it("calls onRequestStart and onRequestEnd with the documented payloads", async () => {
    await (await get("revenue")).json()
    expect(calls.map(([hook]) => hook)).toEqual(["onRequestStart", "onRequestEnd"])
    const [start, end] = calls.map(([, payload]) => payload)
    expect(start).toEqual({
      requestId: "h-revenue",
      queryKey: "revenue",
      method: "GET",
      path: "/api/analytics/revenue",
      request: expect.objectContaining({ method: "GET", path: "/api/analytics/revenue" })
    })
    expect(end).toEqual({ requestId: "h-revenue", queryKey: "revenue", durationMs: expect.any(Number), status: 200, result: { total: 7 } })
  })

  it("gives onError the raw error, and onRequestEnd the error status", async () => {
    expect((await get("broken")).status).toBe(500)
    expect(calls.map(([hook]) => hook)).toEqual(["onRequestStart", "onError", "onRequestEnd"])
    expect(calls[1]![1]).toEqual({ error: failure, queryKey: "broken", requestId: "h-broken", durationMs: expect.any(Number) })
    expect(calls[2]![1]).toMatchObject({ status: 500, result: undefined })
  })

  it("calls onAuthFailure with the reason and the request", async () => {
    expect((await get("secret")).status).toBe(401)
    const authFailure = calls.find(([hook]) => hook === "onAuthFailure")![1]
    expect(authFailure).toEqual({
      requestId: "h-secret",
      queryKey: "secret",
      reason: "missing_credentials",
      request: expect.objectContaining({ path: "/api/analytics/secret" })
    })
  })
})

describe("an async hook or log listener that rejects", () => {
  it("is reported like a throwing one, not left an unhandled rejection that ends a process", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {})
    const down = async () => {
      throw new Error("log sink down")
    }
    const api = defineServe({ queries, queryLogging: down, hooks: { onRequestStart: down, onRequestEnd: down, onError: down, onAuthFailure: down } })
    try {
      for (const key of ["revenue", "broken", "secret"]) await api.handler({ method: "GET", path: `/api/analytics/${key}`, headers: {} })
      await vi.waitFor(() => {
        for (const hook of ["onRequestStart", "onRequestEnd", "onError", "onAuthFailure"]) {
          expect(report).toHaveBeenCalledWith(`[queryserve] ${hook} hook threw`, expect.objectContaining({ message: "log sink down" }))
        }
        expect(report).toHaveBeenCalledWith("[queryserve] query logger listener threw", expect.objectContaining({ message: "log sink down" }))
      })
    } finally {
      report.mockRestore()
    }
  })
})

describe("a throwing hook", () => {
  it("is reported and never changes a response", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {})
    const boom = () => {
      throw new Error("hook bug")
    }
    const api = defineServe({ queries, hooks: { onRequestStart: boom, onRequestEnd: boom, onError: boom, onAuthFailure: boom } })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const ok = await fetch(`${server.url}/api/analytics/revenue`)
      expect(ok.status).toBe(200)
      expect(await ok.json()).toEqual({ total: 7 })
      const broken = await fetch(`${server.url}/api/analytics/broken`)
      expect(broken.status).toBe(500)
      expect((await broken.json()).error.message).toBe("An unexpected error occurred")
      expect((await fetch(`${server.url}/api/analytics/secret`)).status).toBe(401)
      expect(report).toHaveBeenCalledWith("[queryserve] onRequestStart hook threw", expect.any(Error))
      expect(report).toHaveBeenCalledWith("[queryserve] onAuthFailure hook threw", expect.any(Error))
    } finally {
      await server.stop()
      report.mockRestore()
    }
  })
})
