import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ServeContext } from "../domain/config.js"
import type { ResultCacheOptions } from "./options.js"
import { isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import { tenantIdOf } from "../tenancy/tenantPlan.js"
import { RequestContext } from "../stages/context.js"
import type { ContextHandler } from "../stages/middleware.js"
import { serializeJson } from "../stages/output.js"
import { RowStream } from "../stages/rowStream.js"
import type { EndpointPlan } from "../stages/plan.js"
import { keySegment, knownInputKey, resultCacheKey } from "./cacheKey.js"
import { makeMemoryResultCacheStore } from "./memoryResultCacheStore.js"
import { type ResultCacheFilter, ResultCacheStore, type ResultCacheStoreService } from "./ResultCacheStore.js"
import { type ResultCacheKey, StoredResult } from "../stages/storedResult.js"

export interface ResultCacheStats {
  /** Answers of this process served from the cache (a store hit, or a share of another request's run). */
  readonly hits: number
  /** Answers of this process for which the handler ran. */
  readonly misses: number
  /** Entries in the store, and what they take there. */
  readonly entries: number
  readonly bytes: number
}

/** `api.cache`: the result cache of one API. */
export interface ResultCacheControl<K extends string = string> {
  /** Whether `resultCache` is on. */
  readonly enabled: boolean
  /**
   * Drops the entries of one endpoint (`key`), of one tenant, of both, or (no filter) all, and
   * resolves how many were dropped. Rejects when the store fails. Resolves 0 when the cache is off.
   */
  invalidate(filter?: { readonly key?: K; readonly tenantId?: string | number }): Promise<number>
  /** Counts of this process and of the store; zeros when the cache is off. Rejects when the store fails. */
  stats(): Promise<ResultCacheStats>
}

/** The handler and output encoding of one request: what the cache stands in for. */
type CachedWork = (ctx: RequestContext) => MaybePromise<unknown>

/** What the run of a flight gave, for the requests waiting on it; it rejects with an AbortedRun when its request was aborted. */
type Flight = Promise<StoredResult | undefined | typeof PRIVATE>

/** A run whose TTL ended at 0 or null, or that answered a stream: its result is its request's own, neither stored nor shared. */
const PRIVATE = Symbol("private result")

/**
 * What a run gives its own request: the result as stored, nothing, or a stream of rows, which is
 * never stored (it is read once, as the client takes it) and is answered streamed.
 */
type Kept = StoredResult | RowStream | undefined

/** How a flight fails when its run's own request was aborted: the failure is that request's, not its waiters'. */
class AbortedRun {
  constructor(readonly error: unknown) {}
}

const ZERO_STATS: ResultCacheStats = { hits: 0, misses: 0, entries: 0, bytes: 0 }

/**
 * The store of an API whose `resultCache` is on: a ResultCacheStore in the runtime (config
 * `resultCache.store`, or `config.layer`), else a memory store with the configured bounds.
 */
export const resultCacheStore = (settings: ResultCacheOptions | undefined): Effect.Effect<ResultCacheStoreService | undefined> =>
  settings === undefined
    ? Effect.succeed(undefined)
    : Effect.map(Effect.serviceOption(ResultCacheStore), Option.getOrElse(() => makeMemoryResultCacheStore(settings)))

/** A result for an in-process caller (`execute`, another transport): a stored one as a fresh value of its own. */
export const inProcessValue = (value: unknown): unknown => (value instanceof StoredResult ? value.parse() : value)

/**
 * `invalidate`'s filter as the stores read it: a tenant id as its text (the tenant a number stands
 * for, as for requests). A filter that could never match, which only plain JavaScript can write (an
 * unknown key, a tenant id that is no tenant, another value), throws a TypeError: dropping nothing
 * and resolving 0 would leave stale entries behind unnoticed.
 */
const invalidateFilterOf = (filter: unknown, isEndpoint: (key: string) => boolean): ResultCacheFilter => {
  if (filter === undefined) return {}
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw new TypeError("api.cache.invalidate() takes { key?, tenantId? } or nothing")
  }
  // A misspelt field, or one whose value is undefined (an id not set), would widen the filter to every entry.
  for (const [name, value] of Object.entries(filter)) {
    if (name !== "key" && name !== "tenantId") throw new TypeError(`api.cache.invalidate(): unknown filter field "${name}" (it takes key and tenantId)`)
    if (value === undefined) throw new TypeError(`api.cache.invalidate(): ${name} is undefined; leave it out to drop every ${name === "key" ? "endpoint" : "tenant"}'s entries`)
  }
  const { key, tenantId } = filter as { readonly key?: unknown; readonly tenantId?: unknown }
  if (key !== undefined && (typeof key !== "string" || !isEndpoint(key))) {
    throw new TypeError(`api.cache.invalidate(): ${JSON.stringify(key) ?? String(key)} is not an endpoint key of this API`)
  }
  if (tenantId === undefined) return key === undefined ? {} : { key }
  const tenant = tenantIdOf(tenantId)
  if (tenant === null) throw new TypeError("api.cache.invalidate(): tenantId must be a non-empty string or a finite number")
  return key === undefined ? { tenantId: tenant } : { key, tenantId: tenant }
}

/**
 * The result cache of one API in one process: the store, the runs in flight (single flight: one
 * run per key at a time), the hit and miss counts, and the store's health. A store that fails is
 * logged once per outage and bypassed.
 */
export class ResultCache {
  hits = 0
  misses = 0
  /** Bumped by every invalidation: a run that started before one does not store its result. */
  generation = 0
  readonly flights = new Map<string, Flight>()
  private failing = false

  constructor(readonly store: ResultCacheStoreService) {}

  /** The cache of an endpoint whose TTL turns it on (`cacheTtlMs > 0`), else undefined. */
  forEndpoint(plan: EndpointPlan): EndpointCache | undefined {
    return plan.resultCached ? new EndpointCache(this, plan) : undefined
  }

  storeFailed(error: unknown): void {
    // Logged once per outage: a down store under load must not flood the log.
    if (!this.failing) console.error("[queryserve] result cache store failed; running queries without it until it answers again", error)
    this.failing = true
  }

  storeAnswered(): void {
    this.failing = false
  }

  put(key: ResultCacheKey, result: StoredResult, ttlMs: number): void {
    // A stalled Redis client queues every command it is given, payload included, until the server
    // answers: results sent during an outage would pile up in memory. Reads still probe for its return.
    if (this.failing) return
    let stored: MaybePromise<void>
    try {
      stored = this.store.set(key, result, ttlMs)
    } catch (error) {
      return this.storeFailed(error)
    }
    if (isPromiseLike(stored)) stored.then(() => this.storeAnswered(), (error: unknown) => this.storeFailed(error))
  }

  invalidate(filter: ResultCacheFilter): Promise<number> {
    this.generation++
    // Requests from now on start runs of their own rather than wait for a result that may be stale.
    this.flights.clear()
    return Promise.resolve().then(() => this.store.invalidate(filter))
  }

  stats(): Promise<ResultCacheStats> {
    return Promise.resolve()
      .then(() => this.store.stats())
      .then(({ entries, bytes }) => ({ hits: this.hits, misses: this.misses, entries, bytes }))
  }
}

/** `api.cache` over the API's result cache, or over none (`resultCache` off): a filter is checked either way. */
export const resultCacheControl = (cache: ResultCache | undefined, isEndpoint: (key: string) => boolean): ResultCacheControl => ({
  enabled: cache !== undefined,
  invalidate: (filter) => {
    let checked: ResultCacheFilter
    try {
      checked = invalidateFilterOf(filter, isEndpoint)
    } catch (error) {
      return Promise.reject(error)
    }
    return cache === undefined ? Promise.resolve(0) : cache.invalidate(checked)
  },
  stats: () => (cache === undefined ? Promise.resolve(ZERO_STATS) : cache.stats())
})

/**
 * The cache stage of one endpoint: it wraps the handler at the end of the middleware chain, so
 * authentication, guards, tenant, validation and middlewares run on every request, hits included.
 * It answers with the StoredResult (output shaping sends its JSON text as is), or with a parsed
 * copy when the endpoint has middlewares, which see a plain value from `next()`.
 */
export class EndpointCache {
  private readonly segment: string
  /**
   * Middlewares see a parsed copy from `next()`, and may change `ctx.input` after validation; without
   * them a remembered input's key texts hold.
   */
  private readonly hasMiddlewares: boolean

  constructor(private readonly cache: ResultCache, private readonly plan: EndpointPlan) {
    this.segment = keySegment(plan.info.key)
    this.hasMiddlewares = plan.middlewares.length > 0
  }

  /** The handler of the middleware chain: `work` (handler and encoding) behind the cache. */
  handler(work: CachedWork): ContextHandler {
    return (ctx: ServeContext) => this.lookup(RequestContext.of(ctx), work, false)
  }

  /**
   * A hit, a share of a run in flight for the same key, or a run of `work` whose result is stored.
   * Waiters of a run that failed because its request was aborted (its client went away) try again,
   * each time, unless their own request is aborted too: one of them runs again, the others share
   * that run. Waiters of a run that failed otherwise try once more; a second such failure is theirs.
   * Waiters of a run whose handler set its TTL to 0 or null run the handler themselves.
   */
  lookup(ctx: RequestContext, work: CachedWork, retried: boolean): MaybePromise<unknown> {
    const ttl = this.ttlOf(ctx)
    // A TTL of 0 or null at this point (set by a middleware) means: not from the cache, not into it.
    if (ttl === null || ttl <= 0) return this.run(ctx, work, undefined)
    let key: ResultCacheKey
    try {
      const known = ctx.knownInput
      key = known !== undefined && !this.hasMiddlewares
        ? knownInputKey(this.plan.info.key, this.segment, ctx, known)
        : resultCacheKey(this.plan.info.key, this.segment, ctx)
    } catch {
      return this.run(ctx, work, undefined)
    }
    const flight = this.cache.flights.get(key.id)
    if (flight !== undefined) return this.join(ctx, work, flight, retried)
    let found: MaybePromise<StoredResult | undefined>
    try {
      found = this.cache.store.get(key)
    } catch (error) {
      this.cache.storeFailed(error)
      return this.run(ctx, work, key)
    }
    if (!isPromiseLike(found)) {
      this.cache.storeAnswered()
      return found === undefined ? this.run(ctx, work, key) : this.hit(ctx, found)
    }
    // A remote store: the flight starts with the lookup, so requests arriving meanwhile wait for it too.
    let ran = false
    const own = Promise.resolve(found)
      .then(
        (stored) => {
          this.cache.storeAnswered()
          return stored
        },
        (error: unknown) => {
          this.cache.storeFailed(error)
          return undefined
        }
      )
      .then((stored) => {
        if (stored !== undefined) return stored
        ran = true
        return this.runToStore(ctx, work, key)
      })
    // A hit is shared as it is: the TTL that let this request look it up still holds, as no handler ran.
    this.register(key.id, own.then((kept) => this.shared(ctx, kept), (error: unknown) => this.failed(ctx, error)))
    return own.then((kept) => (!ran && kept instanceof StoredResult ? this.hit(ctx, kept) : this.answer(kept)))
  }

  private ttlOf(ctx: RequestContext): number | null {
    return ctx.cacheTtlOverride === undefined ? this.plan.info.cacheTtlMs : ctx.cacheTtlOverride
  }

  private answer(kept: Kept): unknown {
    return kept instanceof StoredResult && this.hasMiddlewares ? kept.parse() : kept
  }

  private hit(ctx: RequestContext, stored: StoredResult | undefined): unknown {
    ctx.cacheStatus = "HIT"
    this.cache.hits++
    const expiresAt = stored?.expiresAt
    if (expiresAt !== undefined) this.answerFor(ctx, expiresAt)
    return this.answer(stored)
  }

  /**
   * Cache-Control of a hit: what is left of the entry, not the request's whole TTL (the run that
   * stored it may have shortened it with `setCacheTtl`). Rounded up to whole seconds, as max-age
   * counts them, so hits in an entry's first second answer what its miss did; past its end, max-age=0.
   */
  private answerFor(ctx: RequestContext, expiresAt: number): void {
    const ttl = this.ttlOf(ctx)
    const left = expiresAt - Date.now()
    if (ttl !== null && left < ttl) ctx.cacheTtlOverride = left > 0 ? Math.min(ttl, Math.ceil(left / 1000) * 1000) : 1
  }

  /**
   * What the waiters of this request's run get: its result, unless the handler made it private (TTL
   * 0 or null) or it is a stream, which only its own request can read.
   */
  private shared(ctx: RequestContext, kept: Kept): StoredResult | undefined | typeof PRIVATE {
    const ttl = this.ttlOf(ctx)
    return ttl === null || ttl <= 0 || kept instanceof RowStream ? PRIVATE : kept
  }

  /** How a run's failure reaches its waiters: marked when the run's own request was aborted. */
  private failed(ctx: RequestContext, error: unknown): never {
    throw ctx.signal.aborted ? new AbortedRun(error) : error
  }

  private join(ctx: RequestContext, work: CachedWork, flight: Flight, retried: boolean): Promise<unknown> {
    return flight.then(
      // A private result is not this request's: it runs the handler itself.
      (stored) => (stored === PRIVATE ? this.run(ctx, work, undefined) : this.hit(ctx, stored)),
      (error: unknown) => {
        if (error instanceof AbortedRun) {
          // Bounded: each retry waits for another request's run, or runs the handler itself.
          if (ctx.signal.aborted) throw error.error
          return this.lookup(ctx, work, retried)
        }
        if (retried) throw error
        return this.lookup(ctx, work, true)
      }
    )
  }

  /** Runs `work` for this request; with a key, concurrent requests for it share the run and its result is stored. */
  private run(ctx: RequestContext, work: CachedWork, key: ResultCacheKey | undefined): MaybePromise<unknown> {
    const stored = this.runToStore(ctx, work, key)
    if (!isPromiseLike(stored)) return this.answer(stored)
    const own = Promise.resolve(stored)
    if (key !== undefined) this.register(key.id, own.then((result) => this.shared(ctx, result), (error: unknown) => this.failed(ctx, error)))
    return own.then((result) => this.answer(result))
  }

  private runToStore(ctx: RequestContext, work: CachedWork, key: ResultCacheKey | undefined): MaybePromise<Kept> {
    ctx.cacheStatus = "MISS"
    this.cache.misses++
    const generation = this.cache.generation
    const result = work(ctx)
    return isPromiseLike(result)
      ? Promise.resolve(result).then((value) => this.keep(ctx, key, generation, value))
      : this.keep(ctx, key, generation, result)
  }

  /**
   * The result as the cache holds it; stored unless it is empty, a stream (passed on as it is), its
   * TTL is now 0 or null, or an invalidation came meanwhile.
   */
  private keep(ctx: RequestContext, key: ResultCacheKey | undefined, generation: number, value: unknown): Kept {
    if (value === undefined || value instanceof RowStream) return value
    const json = serializeJson(value)
    const ttl = this.ttlOf(ctx)
    if (ttl === null || ttl <= 0) return new StoredResult(json)
    // The entry's expiry goes with it: its hits and waiters answer Cache-Control for what is left.
    const stored = new StoredResult(json, Date.now() + ttl)
    if (key !== undefined && generation === this.cache.generation) this.cache.put(key, stored, ttl)
    return stored
  }

  private register(id: string, flight: Flight): void {
    this.cache.flights.set(id, flight)
    const settled = (): void => {
      if (this.cache.flights.get(id) === flight) this.cache.flights.delete(id)
    }
    flight.then(settled, settled)
  }
}
