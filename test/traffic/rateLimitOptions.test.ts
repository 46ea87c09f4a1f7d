/**
 * Regression: `rateLimit` checked none of its numbers. Every comparison with NaN is false, so a `max`
 * or `windowMs` read from an unset variable (`Number(process.env.X)`) let every request through and
 * advertised `X-RateLimit-Limit: NaN`. It now refuses them when called, as `authFailureLimit` does.
 */
import { defineServe, rateLimit } from "queryserve"
import { describe, expect, it } from "vitest"

describe("rateLimit options", () => {
  it.each([Number.NaN, 1.5, -1, Number.POSITIVE_INFINITY])("refuses max: %s with a TypeError naming the option", (max) => {
    expect(() => rateLimit({ max })).toThrow(TypeError)
    expect(() => rateLimit({ max })).toThrow(`rateLimit: max must be a whole number of requests per window, at least 0 (e.g. 100), not ${max}.`)
  })

  it.each([Number.NaN, 0, -1_000, Number.POSITIVE_INFINITY])("refuses windowMs: %s with a TypeError naming the option", (windowMs) => {
    expect(() => rateLimit({ max: 1, windowMs })).toThrow(TypeError)
    expect(() => rateLimit({ max: 1, windowMs })).toThrow(`rateLimit: windowMs must be a positive number of milliseconds (e.g. 60_000), not ${windowMs}.`)
  })

  it("accepts max: 0 (every request refused), a fractional window, and the defaults", async () => {
    const api = defineServe({ queries: { closed: { query: () => "no", middlewares: [rateLimit({ max: 0, windowMs: 1_500.5 })] } } })
    const closed = await api.handler({ method: "GET", path: "/api/analytics/closed", headers: {}, remoteAddress: "198.51.100.1" })
    expect(closed.status).toBe(429)
    expect(closed.headers["x-ratelimit-limit"]).toBe("0")
    expect(() => rateLimit()).not.toThrow()
    expect(() => rateLimit({})).not.toThrow()
  })
})
