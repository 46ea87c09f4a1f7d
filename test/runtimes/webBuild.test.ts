import { createHash } from "node:crypto"
import { fc, test } from "@fast-check/vitest"
import { apiKeyAuth, createFetchHandler, defineServe } from "queryserve/web"
import { describe, expect, it } from "vitest"

/**
 * The web build in this process (vitest isolates each test file, so the Node entry is not loaded
 * here): no node:crypto, so every digest is the SHA-256 written in TypeScript, and no node:http.
 */
const sha256Tag = (body: string): string => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`

describe("queryserve's web build", () => {
  const api = defineServe({
    auth: apiKeyAuth({ keys: { "key-é✓": { name: "one" }, "key-two": { name: "two" } } }),
    queries: {
      echo: { method: "POST", cacheTtlMs: 1_000, query: ({ input }: { input: { text: string } }) => input.text },
      who: { query: ({ ctx }: { ctx: { auth: { name?: unknown } | null } }) => ctx.auth?.name }
    }
  })
  const serve = createFetchHandler(api.handler)

  // Lengths around SHA-256's 64-byte blocks and its 56-byte padding edge, in one- to four-byte UTF-8 characters.
  test.prop([fc.string({ unit: "binary", maxLength: 300 })], { numRuns: 300 })("tags every answer with its SHA-256", async (text) => {
    const response = await api.handler({ method: "POST", path: "/api/analytics/echo", body: { text }, headers: { "x-api-key": "key-two" } })
    expect(response.headers.etag).toBe(sha256Tag(response.body!))
  })

  it("digests a body over 16 Ki characters with Web Crypto, to the same tag", async () => {
    const text = "ü✓".repeat(20_000)
    const response = await serve(new Request("http://localhost/api/analytics/echo", {
      method: "POST",
      headers: { "x-api-key": "key-two", "content-type": "application/json", "accept-encoding": "identity" },
      body: JSON.stringify({ text })
    }))
    const body = await response.text()
    expect(response.headers.get("etag")).toBe(sha256Tag(body))
  })

  it("finds API keys, multi-byte ones included, and refuses others", async () => {
    // A header map, not a fetch Request: Headers holds Latin-1 only, and this key is UTF-8.
    const ask = async (key: string) => api.handler({ method: "GET", path: "/api/analytics/who", headers: { "x-api-key": key } })
    expect((await ask("key-é✓")).body).toBe("\"one\"")
    expect((await ask("key-two")).body).toBe("\"two\"")
    expect((await ask("key-tw")).status).toBe(401)
  })

  it("has no start(): it throws at once, naming createFetchHandler", () => {
    expect(() => api.start()).toThrow(/createFetchHandler/)
  })

  it("refuses metrics at definition, naming the Node entry", () => {
    expect(() => defineServe({ metrics: true, queries: { a: () => 1 } })).toThrow(/queryserve\/node/)
  })
})
