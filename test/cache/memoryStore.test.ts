import {
  defineServe,
  makeMemoryResultCacheStore,
  makeTestResultCacheStore,
  memoryResultCacheStore,
  type ResultCacheControl,
  type ResultCacheKey,
  type ResultCacheStats,
  StoredResult,
  testResultCacheStore
} from "queryserve"
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest"
import { get } from "./support/requests.js"

const key = (id: string, endpoint = "e", tenantId?: string): ResultCacheKey => ({ id, endpoint, tenantId })

describe("memory result cache store", () => {
  afterEach(() => vi.useRealTimers())

  it("answers synchronously, with the same StoredResult for every hit of an entry", () => {
    const store = makeMemoryResultCacheStore()
    const stored = new StoredResult('{"a":1}')
    store.set(key("k"), stored, 60_000)
    expect(store.get(key("k"))).toBe(stored)
    expect(store.get(key("other"))).toBeUndefined()
  })

  it("drops the least recently used entry beyond maxEntries", () => {
    const store = makeMemoryResultCacheStore({ maxEntries: 3 })
    for (const id of ["a", "b", "c"]) store.set(key(id), new StoredResult(`"${id}"`), 60_000)
    store.get(key("a"))
    store.set(key("d"), new StoredResult('"d"'), 60_000)
    expect(["a", "b", "c", "d"].map((id) => store.get(key(id)) !== undefined)).toEqual([true, false, true, true])
    expect(store.stats().entries).toBe(3)
  })

  it("moves an entry to the back on every hit that follows a use of another entry", () => {
    const store = makeMemoryResultCacheStore({ maxEntries: 3 })
    for (const id of ["a", "b", "c"]) store.set(key(id), new StoredResult(`"${id}"`), 60_000)
    // Order of use: c, b, a (a run of hits on a moves it once; the hit after b's moves it again).
    for (const id of ["a", "a", "b", "a"]) store.get(key(id))
    store.set(key("d"), new StoredResult('"d"'), 60_000)
    store.set(key("e"), new StoredResult('"e"'), 60_000)
    expect(["a", "b", "c", "d", "e"].map((id) => store.get(key(id)) !== undefined)).toEqual([true, false, false, true, true])
  })

  it("stays within maxBytes, counting each entry's strings and a fixed overhead, and keeps nothing larger than the bound", () => {
    const maxBytes = 10_000
    const store = makeMemoryResultCacheStore({ maxBytes })
    const json = JSON.stringify("x".repeat(1_000))
    for (let i = 0; i < 100; i++) {
      store.set(key(`k${i}`), new StoredResult(json), 60_000)
      expect(store.stats().bytes).toBeLessThanOrEqual(maxBytes)
    }
    const { entries, bytes } = store.stats()
    // About 1.7 KiB each with what an entry costs besides its JSON: as many as fit.
    expect(entries).toBeGreaterThanOrEqual(5)
    expect(entries).toBeLessThan(10)
    expect(bytes).toBeGreaterThan(entries * json.length)
    expect(bytes + bytes / entries).toBeGreaterThan(maxBytes)
    // The most recent entries are the ones kept.
    expect(store.get(key(`k${100 - entries}`))).toBeDefined()
    expect(store.get(key(`k${99 - entries}`))).toBeUndefined()
    store.set(key("huge"), new StoredResult(JSON.stringify("y".repeat(maxBytes))), 60_000)
    expect(store.get(key("huge"))).toBeUndefined()
    expect(store.stats().entries).toBe(entries)
  })

  it("counts two bytes a character for text beyond Latin-1", () => {
    const latin = makeMemoryResultCacheStore()
    const wide = makeMemoryResultCacheStore()
    latin.set(key("k"), new StoredResult(JSON.stringify("é".repeat(500))), 60_000)
    wide.set(key("k"), new StoredResult(JSON.stringify("€".repeat(500))), 60_000)
    expect(wide.stats().bytes - latin.stats().bytes).toBe(502)
  })

  it("expires entries, replaces an entry set again, and drops by endpoint and tenant", () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const store = makeMemoryResultCacheStore()
    store.set(key("short"), new StoredResult("1"), 100)
    store.set(key("long"), new StoredResult("1"), 1_000)
    store.set(key("long"), new StoredResult("22"), 1_000)
    vi.advanceTimersByTime(100)
    expect(store.get(key("short"))).toBeUndefined()
    expect(store.get(key("long"))?.json).toBe("22")
    expect(store.stats().entries).toBe(1)
    store.set(key("t1", "a", "acme"), new StoredResult("1"), 1_000)
    store.set(key("t2", "b", "acme"), new StoredResult("1"), 1_000)
    store.set(key("t3", "a", "globex"), new StoredResult("1"), 1_000)
    expect(store.invalidate({ key: "a", tenantId: "acme" })).toBe(1)
    expect(store.invalidate({ tenantId: "acme" })).toBe(1)
    expect(store.invalidate({ key: "a" })).toBe(1)
    expect(store.invalidate({})).toBe(1)
    expect(store.stats()).toEqual({ entries: 0, bytes: 0 })
  })

  it("is what `resultCache: { maxEntries, maxBytes }` builds, and can be given as a layer", async () => {
    const queries = { item: { cacheTtlMs: 60_000, query: ({ input }: { input: { id?: string } }) => ({ id: input.id }) } }
    const bounded = defineServe({ resultCache: { maxEntries: 2 }, queries })
    const layered = defineServe({ resultCache: { store: memoryResultCacheStore({ maxEntries: 1 }) }, queries })
    for (const id of ["1", "2", "3"]) {
      await bounded.handler(get("item", { id }))
      await layered.handler(get("item", { id }))
    }
    expect((await bounded.cache.stats()).entries).toBe(2)
    expect((await layered.cache.stats()).entries).toBe(1)
  })
})

describe("choosing the store", () => {
  it("takes a ResultCacheStore that config.layer provides (an Effect user's) before the store option", async () => {
    const fromLayer = makeTestResultCacheStore()
    const fromOption = makeTestResultCacheStore()
    const api = defineServe({
      resultCache: { store: testResultCacheStore(fromOption) },
      layer: testResultCacheStore(fromLayer),
      queries: { item: { cacheTtlMs: 60_000, query: () => ({ ok: true }) } }
    })
    await api.handler(get("item"))
    expect((await api.handler(get("item"))).headers["x-cache"]).toBe("HIT")
    expect(fromLayer.calls).toMatchObject({ get: 2, set: 1 })
    expect(fromOption.calls.get).toBe(0)
  })
})

describe("api.cache types", () => {
  it("types invalidate's key as one of the API's endpoints and resolves counts", async () => {
    const api = defineServe({ resultCache: true, queries: { revenue: () => 1, orders: () => 2 } })
    expectTypeOf(api.cache).toEqualTypeOf<ResultCacheControl<"revenue" | "orders">>()
    expectTypeOf(api.cache.invalidate).parameter(0).toEqualTypeOf<{ readonly key?: "revenue" | "orders"; readonly tenantId?: string | number } | undefined>()
    expectTypeOf(api.cache.invalidate).returns.toEqualTypeOf<Promise<number>>()
    expectTypeOf(api.cache.stats).returns.toEqualTypeOf<Promise<ResultCacheStats>>()
    expectTypeOf<ResultCacheStats>().toEqualTypeOf<{ readonly hits: number; readonly misses: number; readonly entries: number; readonly bytes: number }>()
    // @ts-expect-error: not an endpoint of this API
    await expect(api.cache.invalidate({ key: "nope" })).rejects.toThrow(TypeError)
    // The member exists with the cache off too.
    expectTypeOf(defineServe({ queries: { a: () => 1 } }).cache.enabled).toEqualTypeOf<boolean>()
  })
})
