import { createHash } from "node:crypto"
import { fc, test } from "@fast-check/vitest"
import { apiKeyAuth, defineServe, type RunningServer, withSecurityScheme } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const rows = [{ region: "eu", total: 10 }]
/** The tag is the first 160 bits of the body's SHA-256, base64url: node:crypto checks queryserve's own digest. */
const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`
/** Over 16 Ki characters, with multi-byte ones: where SHA-256 is not native (the web build), digested by Web Crypto. */
const bigRows = Array.from({ length: 400 }, (_, i) => ({ region: `région-${i} ✓`, total: i, note: "x".repeat(40) }))

describe("cache headers, ETag and 304 over a real server", () => {
  let calls = 0
  const api = defineServe({
    queries: {
      cached: { cacheTtlMs: 60_000, query: () => (calls++, rows) },
      big: { cacheTtlMs: 60_000, query: () => bigRows },
      privateCached: { cacheTtlMs: 30_500, auth: apiKeyAuth({ keys: { k1: { id: "u1" } } }), query: () => rows },
      customAuthCached: { cacheTtlMs: 30_500, auth: () => ({ id: "u1" }), query: () => rows },
      documentedAuthCached: {
        cacheTtlMs: 30_500,
        auth: [withSecurityScheme(() => null, { type: "http", scheme: "bearer" }), apiKeyAuth({ header: "X-Team-Key", keys: { k2: { id: "u2" } } })],
        query: () => rows
      },
      tenantCached: { cacheTtlMs: 5_000, tenant: { extract: () => "t1" }, query: () => rows },
      noStore: { cacheTtlMs: 0, query: () => rows },
      uncached: () => rows,
      perRequest: {
        cacheTtlMs: 60_000,
        query: ({ input, ctx }: { input: { ttl?: string }; ctx: { setCacheTtl(ms: number | null): void } }) => {
          ctx.setCacheTtl(input.ttl === "none" ? null : Number(input.ttl))
          return rows
        }
      },
      nothing: { cacheTtlMs: 60_000, query: () => undefined }
    },
    cors: { origin: "https://app.example", credentials: true }
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}/api/analytics/${path}`, { headers })

  it("is public with max-age for a public endpoint, with a strong ETag of the body", async () => {
    const response = await get("cached")
    const body = await response.text()
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("public, max-age=60")
    expect(response.headers.get("etag")).toBe(etagOf(body))
    // The format is negotiated by Accept; CORS with a list of origins adds Origin.
    expect(response.headers.get("vary")).toBe("Accept, Origin")
  })

  it("tags a large body with the same digest, weak when compressed, and answers 304 for either tag", async () => {
    const plain = await get("big", { "accept-encoding": "identity" })
    const body = await plain.text()
    expect(body.length).toBeGreaterThan(16 * 1024)
    const etag = plain.headers.get("etag")
    expect(etag).toBe(etagOf(body))
    const compressed = await get("big", { "accept-encoding": "gzip" })
    expect(compressed.headers.get("content-encoding")).toBe("gzip")
    expect(await compressed.text()).toBe(body)
    expect(compressed.headers.get("etag")).toBe(`W/${etag}`)
    for (const tag of [etag!, `W/${etag}`]) {
      const again = await get("big", { "if-none-match": tag })
      expect(again.status).toBe(304)
      expect(await again.text()).toBe("")
    }
  })

  it("is private when the endpoint requires auth or a tenant, no-store for 0, absent for null", async () => {
    const keyed = await get("privateCached", { "x-api-key": "k1" })
    expect([keyed.headers.get("cache-control"), keyed.headers.get("vary")]).toEqual(["private, max-age=30", "Accept, x-api-key, Origin"])
    expect((await get("tenantCached")).headers.get("cache-control")).toBe("private, max-age=5")
    const noStore = await get("noStore")
    expect(noStore.headers.get("cache-control")).toBe("no-store")
    expect(noStore.headers.get("etag")).toBeNull()
    const uncached = await get("uncached")
    expect(uncached.headers.get("cache-control")).toBeNull()
    expect(uncached.headers.get("etag")).toBeNull()
  })

  // A browser keys its own cache by URL and the Vary headers: an answer kept for one caller must not
  // be given to the next one who signs in on that browser with other credentials.
  it("varies a private answer by the headers its strategies read, and has it revalidated when a strategy does not say", async () => {
    const documented = await get("documentedAuthCached", { "x-team-key": "k2" })
    expect([documented.headers.get("cache-control"), documented.headers.get("vary")]).toEqual(["private, max-age=30", "Accept, Authorization, X-Team-Key, Origin"])
    const custom = await get("customAuthCached")
    expect([custom.headers.get("cache-control"), custom.headers.get("vary"), custom.headers.get("etag")]).toEqual(["private, no-cache", "Accept, Origin", etagOf(await custom.text())])
  })

  it("answers a matching If-None-Match with 304 and no body, keeping the validators", async () => {
    const first = await get("cached")
    const etag = first.headers.get("etag")!
    await first.text()
    const before = calls
    const again = await get("cached", { "if-none-match": etag, "x-request-id": "r-304" })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    expect(again.headers.get("etag")).toBe(etag)
    expect(again.headers.get("cache-control")).toBe("public, max-age=60")
    expect(again.headers.get("x-request-id")).toBe("r-304")
    expect(calls).toBe(before + 1)
    expect((await get("cached", { "if-none-match": `"other", W/${etag}` })).status).toBe(304)
    expect((await get("cached", { "if-none-match": "*" })).status).toBe(304)
    const stale = await get("cached", { "if-none-match": '"stale"' })
    expect(stale.status).toBe(200)
    expect(await stale.json()).toEqual(rows)
  })

  it("lets ctx.setCacheTtl change the policy per request", async () => {
    expect((await get("perRequest?ttl=120000")).headers.get("cache-control")).toBe("public, max-age=120")
    expect((await get("perRequest?ttl=0")).headers.get("cache-control")).toBe("no-store")
    const none = await get("perRequest?ttl=none")
    expect(none.headers.get("cache-control")).toBeNull()
    expect(none.headers.get("etag")).toBeNull()
  })

  it("keeps Cache-Control on a 204 and adds no ETag to an empty answer", async () => {
    const response = await get("nothing")
    expect(response.status).toBe(204)
    expect(response.headers.get("cache-control")).toBe("public, max-age=60")
    expect(response.headers.get("etag")).toBeNull()
  })

  it("keeps both Vary values when CORS reflects an allowed origin", async () => {
    const response = await get("cached", { origin: "https://app.example" })
    expect(response.headers.get("vary")).toBe("Accept, Origin")
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example")
  })

  it("never caches errors", async () => {
    const api = defineServe({ queries: { broken: { cacheTtlMs: 60_000, query: () => Promise.reject(new Error("boom")) } } })
    const response = await api.handler({ method: "GET", path: "/api/analytics/broken" })
    expect(response.status).toBe(500)
    expect(response.headers["cache-control"]).toBeUndefined()
    expect(response.headers.etag).toBeUndefined()
  })
})

describe("the ETag digest", () => {
  const api = defineServe({ queries: { echo: { method: "POST", cacheTtlMs: 1_000, query: ({ input }: { input: { text: string } }) => input.text } } })

  // Lengths around SHA-256's 64-byte blocks and its 56-byte padding edge, in one- to four-byte UTF-8 characters.
  test.prop([fc.string({ unit: "binary", maxLength: 200 })], { numRuns: 300 })("is the body's SHA-256 for any text", async (text) => {
    const response = await api.handler({ method: "POST", path: "/api/analytics/echo", body: { text } })
    expect(response.headers.etag).toBe(etagOf(response.body!))
  })
})
