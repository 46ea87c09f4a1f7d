import { NodeSdk } from "@effect/opentelemetry"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Option } from "effect"
import { defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parentName, recordingTracer } from "../support/recordingTracer.js"

const queries = {
  revenue: { auth: () => ({ roles: ["analyst"] }), requiredRoles: ["analyst"], query: () => ({ total: 1 }) },
  effectful: () => Effect.succeed("done").pipe(Effect.withSpan("user.query")),
  denied: { auth: () => null, requiresAuth: true, query: () => "never" }
}

describe("stage spans over a real server, recorded by a test tracer", () => {
  const recorder = recordingTracer()
  const api = defineServe({
    queries,
    middlewares: [(_ctx, next) => next()],
    layer: recorder.layer
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())

  it("runs every stage in a span named for it, under one request span, with the request id and query key", async () => {
    recorder.spans.length = 0
    const response = await fetch(`${server.url}/api/analytics/revenue`, { headers: { "x-request-id": "trace-1" } })
    expect(await response.json()).toEqual({ total: 1 })
    expect(recorder.spans.map((span) => span.name)).toEqual([
      "queryserve.request",
      "queryserve.authenticate",
      "queryserve.guards",
      "queryserve.tenant",
      "queryserve.validate",
      "queryserve.context",
      "queryserve.middleware",
      "queryserve.handler",
      "queryserve.output"
    ])
    for (const span of recorder.spans) {
      expect(span.attributes.get("requestId")).toBe("trace-1")
      expect(span.attributes.get("queryKey")).toBe("revenue")
    }
    const parents = Object.fromEntries(recorder.spans.map((span) => [span.name, parentName(span)]))
    expect(parents["queryserve.authenticate"]).toBe("queryserve.request")
    expect(parents["queryserve.handler"]).toBe("queryserve.middleware")
    expect(parents["queryserve.output"]).toBe("queryserve.request")
  })

  it("nests an Effect handler's own spans under the handler span", async () => {
    recorder.spans.length = 0
    expect(await (await fetch(`${server.url}/api/analytics/effectful`)).json()).toBe("done")
    const user = recorder.spans.find((span) => span.name === "user.query")!
    expect(parentName(user)).toBe("queryserve.handler")
  })

  it("ends a failing stage's span with the failure, and answers as without tracing", async () => {
    recorder.spans.length = 0
    const response = await fetch(`${server.url}/api/analytics/denied`)
    expect(response.status).toBe(401)
    expect((await response.json()).error.details.reason).toBe("missing_credentials")
    const guards = recorder.spans.find((span) => span.name === "queryserve.guards")!
    expect(guards.status._tag === "Ended" && guards.status.exit._tag).toBe("Failure")
    expect(recorder.spans.map((span) => span.name)).not.toContain("queryserve.handler")
  })
})

describe("when tracing is on", () => {
  it("is off with `tracing: false` even when the layer installs a tracer", async () => {
    const recorder = recordingTracer()
    const api = defineServe({ queries, layer: recorder.layer, tracing: false })
    await api.handler({ method: "GET", path: "/api/analytics/revenue" })
    expect(recorder.spans).toEqual([])
  })

  it("is off by default without a tracer: an Effect handler then sees no queryserve span", async () => {
    const currentSpan = () => Effect.map(Effect.option(Effect.currentSpan), (span) => Option.getOrNull(Option.map(span, (s) => s.name)))
    const plain = defineServe({ queries: { span: () => currentSpan() } })
    expect(await plain.execute("span")).toBeNull()
    const traced = defineServe({ queries: { span: () => currentSpan() }, tracing: true })
    expect(await traced.execute("span")).toBe("queryserve.handler")
  })

  it("exports the spans through @effect/opentelemetry", async () => {
    const exporter = new InMemorySpanExporter()
    const api = defineServe({
      queries,
      layer: NodeSdk.layer(() => ({ resource: { serviceName: "queryserve-test" }, spanProcessor: new SimpleSpanProcessor(exporter) }))
    })
    try {
      const response = await api.handler({ method: "GET", path: "/api/analytics/revenue", headers: { "x-request-id": "otel-1" } })
      expect(response.status).toBe(200)
      const names = exporter.getFinishedSpans().map((span) => span.name)
      expect(names).toEqual(expect.arrayContaining(["queryserve.request", "queryserve.authenticate", "queryserve.handler", "queryserve.output"]))
      const request = exporter.getFinishedSpans().find((span) => span.name === "queryserve.request")!
      expect(request.attributes).toMatchObject({ requestId: "otel-1", queryKey: "revenue", "http.method": "GET" })
    } finally {
      await api.dispose()
    }
  })
})
