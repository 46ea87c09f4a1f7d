/**
 * Two APIs on one Redis with default options: each keeps its own entries (the default prefix names
 * the API), while every process of one API (here: two definitions of it, as two processes make) shares them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { defineServe, makeMemoryResultCacheStore, redisResultCacheStore, ResultCacheNamespace, ResultCacheStore } from "queryserve"
import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, redisUnavailable, startRedis } from "../support/redisServer.js"
import { get } from "./support/requests.js"

const skipReason = redisUnavailable()

describe.skipIf(skipReason !== undefined)("result cache namespace on one real redis-server", () => {
  let redis: RedisServer
  const clients: Array<{ close(): Promise<void> }> = []
  let observer: ReturnType<typeof createClient>
  const connected = async () => {
    const client = createClient({ url: redis.url })
    await client.connect()
    clients.push(client)
    return client
  }
  /** One definition of the "billing" API, as each of its processes makes it, with a connection of its own. */
  const billing = async () =>
    defineServe({
      resultCache: { store: redisResultCacheStore({ client: await connected() }) },
      queries: {
        orders: { cacheTtlMs: 60_000, query: () => [{ api: "billing" }] },
        invoices: { cacheTtlMs: 60_000, query: () => [] }
      }
    })
  const shipping = async (options: { readonly namespace?: string; readonly prefix?: string } = {}) =>
    defineServe({
      resultCache: { store: redisResultCacheStore({ client: await connected() }, { prefix: options.prefix }), namespace: options.namespace },
      queries: {
        orders: { cacheTtlMs: 60_000, query: () => [{ api: "shipping" }] },
        parcels: { cacheTtlMs: 60_000, query: () => [] }
      }
    })
  const keys = async (): Promise<Array<string>> => (await observer.keys("*")).sort()

  beforeAll(async () => {
    redis = await startRedis()
    observer = createClient({ url: redis.url })
    await observer.connect()
    clients.push(observer)
  })
  afterAll(async () => {
    for (const client of clients) await client.close()
    await redis?.stop()
  })

  it("keeps two APIs' answers apart and shares one API's between its processes", async () => {
    const billingOne = await billing()
    const shippingApi = await shipping()
    const first = await billingOne.handler(get("orders"))
    expect(first.headers["x-cache"]).toBe("MISS")
    // Another API with an endpoint of the same key does not get billing's answer.
    const other = await shippingApi.handler(get("orders"))
    expect(other.headers["x-cache"]).toBe("MISS")
    expect(JSON.parse(other.body!)).toEqual([{ api: "shipping" }])

    // A second process of billing (the same definition) shares billing's entry.
    const billingTwo = await billing()
    const shared = await billingTwo.handler(get("orders"))
    expect(shared.headers["x-cache"]).toBe("HIT")
    expect(shared.body).toBe(first.body)

    const stored = await keys()
    expect(stored).toHaveLength(2)
    const prefixes = stored.map((key) => key.slice(0, key.indexOf("orders:")))
    for (const prefix of prefixes) expect(prefix).toMatch(/^queryserve:cache:[A-Za-z0-9_-]{12}:$/)
    expect(new Set(prefixes).size).toBe(2)

    // Each API counts and drops its own entries only.
    expect((await shippingApi.cache.stats()).entries).toBe(1)
    expect(await shippingApi.cache.invalidate()).toBe(1)
    expect((await billingTwo.handler(get("orders"))).headers["x-cache"]).toBe("HIT")
    expect((await billingOne.cache.stats()).entries).toBe(1)
    for (const api of [billingOne, billingTwo, shippingApi]) await api.dispose()
  })

  it("takes resultCache.namespace as the API's name, and a store's own prefix over either", async () => {
    await observer.flushAll()
    const named = await shipping({ namespace: "shipping eu" })
    expect((await named.handler(get("orders"))).headers["x-cache"]).toBe("MISS")
    const prefixed = await shipping({ namespace: "ignored", prefix: "mine:" })
    expect((await prefixed.handler(get("orders"))).headers["x-cache"]).toBe("MISS")
    expect(await keys()).toEqual(["mine:orders:p:{}", "queryserve:cache:shipping%20eu:orders:p:{}"])
    // Another definition that names itself alike shares the entries.
    const sameName = await shipping({ namespace: "shipping eu" })
    expect((await sameName.handler(get("orders"))).headers["x-cache"]).toBe("HIT")
    for (const api of [named, prefixed, sameName]) await api.dispose()
  })
})

it("hands the namespace to a store layer of the user's own, which reads it from the public Tag", async () => {
  const seen: Array<string> = []
  const recording = Layer.effect(
    ResultCacheStore,
    Effect.map(ResultCacheNamespace, (namespace) => {
      seen.push(namespace)
      return makeMemoryResultCacheStore()
    })
  )
  const named = defineServe({ resultCache: { store: recording, namespace: "billing" }, queries: { a: { cacheTtlMs: 1000, query: () => 1 } } })
  const derived = defineServe({ resultCache: { store: recording }, queries: { a: { cacheTtlMs: 1000, query: () => 1 } } })
  await named.execute("a")
  await derived.execute("a")
  expect(seen[0]).toBe("billing")
  expect(seen[1]).toMatch(/^[\w-]{12}$/)
  await Promise.all([named.dispose(), derived.dispose()])
})
