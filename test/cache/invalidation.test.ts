import { defineServe, type ServeRequest } from "queryserve"
import { describe, expect, it, vi } from "vitest"
import { counted, get } from "./support/requests.js"

describe("result cache: invalidation and stats", () => {
  const tenantOf = (request: ServeRequest) => request.headers?.["x-tenant"]
  const makeApi = () => {
    const { runs, query } = counted()
    const tenant = { extract: (auth: { tenantId?: string } | null) => auth?.tenantId ?? null }
    const auth = ({ request }: { request: ServeRequest }) => {
      const tenantId = tenantOf(request)
      return typeof tenantId === "string" ? { tenantId } : null
    }
    const api = defineServe({
      resultCache: true,
      auth,
      tenant,
      queries: { first: { cacheTtlMs: 60_000, query }, second: { cacheTtlMs: 60_000, query } }
    })
    const fill = async () => {
      for (const key of ["first", "second"]) {
        for (const tenantId of ["acme", "globex", "*"]) await api.handler(get(key, {}, { "x-tenant": tenantId }))
      }
    }
    return { api, runs, fill }
  }

  it("drops an endpoint's entries, a tenant's, both, or all, and resolves the count", async () => {
    const { api, fill } = makeApi()
    await fill()
    expect((await api.cache.stats()).entries).toBe(6)
    expect(await api.cache.invalidate({ key: "first", tenantId: "acme" })).toBe(1)
    // A tenant id that looks like a wildcard matches only itself.
    expect(await api.cache.invalidate({ tenantId: "*" })).toBe(2)
    expect(await api.cache.invalidate({ key: "second" })).toBe(2)
    expect(await api.cache.invalidate({ tenantId: "acme" })).toBe(0)
    expect((await api.cache.stats()).entries).toBe(1)
    expect(await api.cache.invalidate()).toBe(1)
    await fill()
    expect(await api.cache.invalidate({})).toBe(6)
  })

  it("drops a numeric tenant's entries by the number, as requests scope them", async () => {
    const api = defineServe({
      resultCache: true,
      auth: ({ request }) => ({ orgId: Number(request.headers?.["x-tenant"]) }),
      tenant: { extract: (auth) => auth?.orgId },
      queries: { first: { cacheTtlMs: 60_000, query: () => ({ at: Date.now() }) } }
    })
    for (const tenantId of ["42", "7"]) await api.handler(get("first", {}, { "x-tenant": tenantId }))
    expect(await api.cache.invalidate({ tenantId: 42 })).toBe(1)
    expect(await api.cache.invalidate({ tenantId: "7" })).toBe(1)
  })

  // Only plain JavaScript can write these; resolving 0 would leave the entries behind unnoticed.
  it.each([
    ["an unknown key", { key: "frist" }, /"frist" is not an endpoint key/],
    ["a key that is no string", { key: 1 }, /1 is not an endpoint key/],
    ["an empty tenant id", { tenantId: "" }, /tenantId must be a non-empty string or a finite number/],
    ["a tenant id object", { tenantId: { id: "acme" } }, /tenantId must be/],
    ["a non-finite tenant id", { tenantId: Number.NaN }, /tenantId must be/],
    ["a key instead of a filter", "first", /takes \{ key\?, tenantId\? \} or nothing/],
    ["a misspelt field", { tenant: "acme" }, /unknown filter field "tenant"/],
    ["a tenant id that is undefined", { tenantId: undefined }, /tenantId is undefined; leave it out/],
    ["a key that is undefined", { key: undefined, tenantId: "7" }, /key is undefined; leave it out/],
    ["null", null, /takes/]
  ])("rejects %s with a TypeError, whether the cache is on or off", async (_name, filter, message) => {
    const { api, fill } = makeApi()
    await fill()
    const invalidate = api.cache.invalidate as (filter: unknown) => Promise<number>
    await expect(invalidate(filter)).rejects.toThrow(TypeError)
    await expect(invalidate(filter)).rejects.toThrow(message)
    expect((await api.cache.stats()).entries).toBe(6)
    const off = defineServe({ queries: { first: () => 1 } }).cache.invalidate as (filter: unknown) => Promise<number>
    await expect(off(filter)).rejects.toThrow(message)
  })

  it("answers MISS after an invalidation, and a run in flight during one does not store its stale result", async () => {
    let release: () => void = () => {}
    let runs = 0
    const api = defineServe({
      resultCache: true,
      queries: { slow: { cacheTtlMs: 60_000, query: () => new Promise((resolve) => (runs++, release = () => resolve({ run: runs }))) } }
    })
    const pending = Promise.resolve(api.handler(get("slow")))
    await vi.waitFor(() => expect(runs).toBe(1))
    expect(await api.cache.invalidate({ key: "slow" })).toBe(0)
    release()
    expect((await pending).headers["x-cache"]).toBe("MISS")
    const after = Promise.resolve(api.handler(get("slow")))
    await vi.waitFor(() => expect(runs).toBe(2))
    release()
    expect((await after).headers["x-cache"]).toBe("MISS")
    expect((await api.handler(get("slow"))).headers["x-cache"]).toBe("HIT")
  })

  it("counts hits and misses of this process and the entries and bytes of the store", async () => {
    const { api } = makeApi()
    await api.handler(get("first", {}, { "x-tenant": "acme" }))
    await api.handler(get("first", {}, { "x-tenant": "acme" }))
    await api.handler(get("first", {}, { "x-tenant": "acme" }))
    const stats = await api.cache.stats()
    expect(stats).toMatchObject({ hits: 2, misses: 1, entries: 1 })
    expect(stats.bytes).toBeGreaterThan('[{"region":"all","limit":10,"run":1}]'.length)
  })
})

describe("result cache in the OpenAPI document", () => {
  it("describes x-cache on the 200 of cached endpoints only", async () => {
    const queries = { cached: { cacheTtlMs: 60_000, query: () => [1] }, fresh: { cacheTtlMs: 0, query: () => [2] } }
    const documentOf = async (api: { handler: (request: ServeRequest) => unknown }) =>
      JSON.parse((await Promise.resolve(api.handler(get("openapi.json"))) as { body: string }).body) as {
        paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown> }> } }>
        components: { headers: Record<string, { schema: unknown }> }
      }
    const on = await documentOf(defineServe({ resultCache: true, queries }))
    expect(Object.keys(on.paths["/api/analytics/cached"]!.get.responses["200"]!.headers!)).toContain("X-Cache")
    expect(Object.keys(on.paths["/api/analytics/fresh"]!.get.responses["200"]!.headers!)).not.toContain("X-Cache")
    expect(on.components.headers["Cache"]!.schema).toEqual({ type: "string", enum: ["HIT", "MISS"] })
    const off = await documentOf(defineServe({ queries }))
    expect(Object.keys(off.paths["/api/analytics/cached"]!.get.responses["200"]!.headers!)).not.toContain("X-Cache")
  })
})
