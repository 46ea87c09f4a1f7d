import { defineServe } from "queryserve"
import { describe, expect, it } from "vitest"
import { get } from "./support/requests.js"
import { parentName, recordingTracer } from "../support/recordingTracer.js"


describe("result cache with stage spans (tracing on)", () => {
  it("runs the cache in its own span: a miss runs handler and output under it, a hit neither", async () => {
    const recorder = recordingTracer()
    let runs = 0
    const api = defineServe({
      resultCache: true,
      middlewares: [(_ctx, next) => next()],
      layer: recorder.layer,
      queries: { rows: { cacheTtlMs: 60_000, query: () => [{ run: ++runs }] } }
    })
    const miss = await api.handler(get("rows"))
    // The stages before the middlewares are as without the cache; after them:
    expect(recorder.spans.map((span) => span.name).slice(-4)).toEqual(["queryserve.middleware", "queryserve.cache", "queryserve.handler", "queryserve.output"])
    const parents = Object.fromEntries(recorder.spans.map((span) => [span.name, parentName(span)]))
    expect(parents["queryserve.cache"]).toBe("queryserve.middleware")
    expect(parents["queryserve.handler"]).toBe("queryserve.cache")
    recorder.spans.length = 0
    const hit = await api.handler(get("rows"))
    expect(recorder.spans.map((span) => span.name)).not.toContain("queryserve.handler")
    expect(recorder.spans.map((span) => span.name)).toContain("queryserve.cache")
    expect([miss.headers["x-cache"], hit.headers["x-cache"]]).toEqual(["MISS", "HIT"])
    expect(hit.body).toBe(miss.body)
    expect(runs).toBe(1)
  })
})
