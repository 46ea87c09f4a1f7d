/**
 * Regression: every part of the pipeline that makes an answer depend on a request header must say so
 * in `Vary`, or a shared cache hands one client's answer to another. A handler's
 * `ctx.setHeader("Vary", …)` replaced the Vary output shaping (Accept) and CORS (Origin) had built,
 * and a preflight from a refused origin had no `Vary: Origin` at all.
 */
import { defineServe, type ServeContext, type ServeRequest } from "queryserve"
import { describe, expect, it } from "vitest"

const APP = "https://app.example.com"
const OTHER = "https://evil.example.net"

const api = defineServe({
  cors: { origin: [APP] },
  queries: {
    localized: {
      query: ({ ctx }: { ctx: ServeContext }) => {
        ctx.setHeader("Vary", "Accept-Language, origin")
        return [{ a: 1 }]
      },
      cacheTtlMs: 60_000
    },
    everything: {
      query: ({ ctx }: { ctx: ServeContext }) => {
        ctx.setHeader("vary", "*")
        return [{ a: 1 }]
      },
      cacheTtlMs: 60_000
    },
    failing: ({ ctx }: { ctx: ServeContext }) => {
      ctx.setHeader("Vary", "Accept-Language")
      throw new Error("boom")
    },
    ping: () => "pong"
  }
})

const call = (path: string, headers: Record<string, string>, method = "GET") =>
  Promise.resolve(api.handler({ method, path: `/api/analytics/${path}`, headers, remoteAddress: "198.51.100.1" } satisfies ServeRequest))

describe("Vary", () => {
  it("merges a handler's Vary with Accept and Origin, each name once whatever its case", async () => {
    const allowed = await call("localized", { origin: APP })
    expect(allowed.status).toBe(200)
    expect(allowed.headers["access-control-allow-origin"]).toBe(APP)
    expect(allowed.headers.vary).toBe("Accept, Origin, Accept-Language")
    // A refused origin gets the CORS `Vary: Origin` alone: merged the same way.
    expect((await call("localized", { origin: OTHER })).headers.vary).toBe("Accept, Origin, Accept-Language")
  })

  it("keeps `*` alone: it already says the answer varies on everything", async () => {
    expect((await call("everything", { origin: APP })).headers.vary).toBe("*")
  })

  it("merges it on error answers too", async () => {
    const failed = await call("failing", { origin: APP })
    expect(failed.status).toBe(500)
    expect(failed.headers.vary).toBe("Origin, Accept-Language")
  })

  it("is Origin on a preflight from a refused origin, as on the allowed one's", async () => {
    const preflight = (origin: string) => call("ping", { origin, "access-control-request-method": "POST" }, "OPTIONS")
    const allowed = await preflight(APP)
    expect(allowed.headers).toMatchObject({ "access-control-allow-origin": APP, vary: "Origin" })
    const refused = await preflight(OTHER)
    expect(refused.status).toBe(204)
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined()
    expect(refused.headers["access-control-allow-methods"]).toBeUndefined()
    expect(refused.headers.vary).toBe("Origin")
  })

  it("stays absent on a preflight when every origin is allowed with `*`", async () => {
    const open = defineServe({ cors: true, queries: { ping: () => "pong" } })
    const preflight = await open.handler({ method: "OPTIONS", path: "/api/analytics/ping", headers: { origin: OTHER, "access-control-request-method": "POST" } })
    expect(preflight.headers["access-control-allow-origin"]).toBe("*")
    expect(preflight.headers.vary).toBeUndefined()
  })
})
