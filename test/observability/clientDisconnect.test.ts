/**
 * A client that closes the connection before its answer: events, hooks, the log line and metrics
 * report 499 (nginx's "client closed request"), not a server failure, and `onError` is not called,
 * whether the handler failed because of the abort or completed anyway. A request timeout stays 504.
 */
import http from "node:http"
import { createFetchHandler, defineServe, type RunningServer, type ServeQueryEvent } from "queryserve"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { writtenLogLines } from "../support/logLines.js"
import { parseExposition, valueOf } from "../support/prometheus.js"

interface Ctx {
  readonly ctx: { readonly signal: AbortSignal }
}

/** Called by a handler once it runs: the client may leave now. */
let handlerStarted: () => void = () => {}

const running = (): Promise<void> => new Promise((resolve) => void (handlerStarted = resolve))

const queries = {
  // Honours ctx.signal, as a driver cancelling its query does: fails with the abort reason.
  honouring: ({ ctx }: Ctx) =>
    new Promise((_, reject) => {
      ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })
      handlerStarted()
    }),
  // Carries on after the abort and returns rows that nobody receives.
  completing: ({ ctx }: Ctx) =>
    new Promise((resolve) => {
      ctx.signal.addEventListener("abort", () => resolve([{ a: 1 }]), { once: true })
      handlerStarted()
    })
}

/** A GET whose client closes the connection once the handler runs. */
const abandon = async (url: string): Promise<void> => {
  const started = running()
  const request = http.get(url)
  request.on("error", () => undefined)
  await started
  request.destroy()
}

interface Recorded {
  readonly hooks: Array<string>
  readonly ended: Promise<void>
}

/** Hooks that record their calls; `ended` settles with each onRequestEnd (re-armed by `expectEnd`). */
const recordingHooks = () => {
  const calls: Array<string> = []
  let ended: () => void = () => {}
  const hooks = {
    onError: () => void calls.push("onError"),
    onRequestEnd: (event: { readonly status: number }) => {
      calls.push(`onRequestEnd ${event.status}`)
      ended()
    }
  }
  const expectEnd = (): Recorded => ({ hooks: calls, ended: new Promise((resolve) => void (ended = resolve)) })
  return { calls, hooks, expectEnd }
}

describe("a client that closes the connection mid-request (Node server)", () => {
  const recording = recordingHooks()
  const events: Array<ServeQueryEvent> = []
  const logged = defineServe({ queries, queryLogging: true, metrics: { public: true }, hooks: recording.hooks })
  const evented = defineServe({ queries, queryLogging: (event) => void events.push(event), hooks: recording.hooks })
  let loggedServer: RunningServer
  let eventedServer: RunningServer
  let log: ReturnType<typeof vi.spyOn>
  beforeAll(async () => {
    loggedServer = await logged.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    eventedServer = await evented.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(async () => {
    await loggedServer.stop()
    await eventedServer.stop()
    await logged.dispose()
    await evented.dispose()
  })
  afterEach(() => {
    recording.calls.length = 0
    events.length = 0
    log?.mockRestore()
  })

  const abandonAndWait = async (server: RunningServer, key: string): Promise<Recorded> => {
    const recorded = recording.expectEnd()
    await abandon(`${server.url}/api/analytics/${key}`)
    await recorded.ended
    return recorded
  }

  it.each(["honouring", "completing"])("reports 499 in the error event, without onError (%s handler)", async (key) => {
    const { hooks } = await abandonAndWait(eventedServer, key)
    expect(hooks).toEqual(["onRequestEnd 499"])
    const final = events.find((event) => event.status !== "started")
    expect(final).toMatchObject({ status: "error", responseStatus: 499, result: undefined })
    expect(final?.error).toMatchObject({ name: "AbortError", message: "The client closed the connection" })
  })

  it.each(["honouring", "completing"])("writes a 499 log line and counts status 499 (%s handler)", async (key) => {
    log = vi.spyOn(console, "log").mockImplementation(() => {})
    const { hooks } = await abandonAndWait(loggedServer, key)
    expect(hooks).toEqual(["onRequestEnd 499"])
    expect(await writtenLogLines(log)).toEqual([
      expect.stringMatching(new RegExp(`^✗ GET /api/analytics/${key} → 499 \\(\\d+ms\\) - The client closed the connection$`))
    ])
    const metrics = parseExposition(await (await fetch(`${loggedServer.url}/api/analytics/metrics`)).text())
    expect(valueOf(metrics, "queryserve_requests_total", { endpoint: key, method: "GET", status: "499" })).toBe(1)
    expect(valueOf(metrics, "queryserve_requests_total", { endpoint: key, method: "GET", status: "500" })).toBeUndefined()
    expect(valueOf(metrics, "queryserve_requests_total", { endpoint: key, method: "GET", status: "200" })).toBeUndefined()
  })
})

describe("a request timeout", () => {
  it("stays a 504 with onError, though ctx.signal aborts with it too", async () => {
    const recording = recordingHooks()
    const api = defineServe({ queries, hooks: recording.hooks })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, requestTimeout: 100 })
    try {
      const recorded = recording.expectEnd()
      expect((await fetch(`${server.url}/api/analytics/honouring`)).status).toBe(504)
      await recorded.ended
      expect(recorded.hooks).toEqual(["onError", "onRequestEnd 504"])
    } finally {
      await server.stop()
      await api.dispose()
    }
  })
})

describe("a client that goes away from the fetch handler (the Request's signal aborts)", () => {
  it.each(["honouring", "completing"])("reports 499 without onError (%s handler)", async (key) => {
    const recording = recordingHooks()
    const events: Array<ServeQueryEvent> = []
    const api = defineServe({ queries, queryLogging: (event) => void events.push(event), hooks: recording.hooks })
    const client = new AbortController()
    const recorded = recording.expectEnd()
    const started = running()
    void createFetchHandler(api.handler, { requestTimeout: 0 })(new Request(`http://x.test/api/analytics/${key}`, { signal: client.signal }))
    await started
    client.abort()
    await recorded.ended
    expect(recorded.hooks).toEqual(["onRequestEnd 499"])
    expect(events.find((event) => event.status !== "started")).toMatchObject({ status: "error", responseStatus: 499 })
    await api.dispose()
  })
})
