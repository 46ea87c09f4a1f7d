import type { ServeContext, ServeMiddleware } from "../domain/config.js"
import { RateLimited, ServiceUnavailable } from "../domain/errors.js"
import { clientAddress, trustedHopCount } from "../domain/http.js"
import { type MaybePromise, isPromiseLike } from "../domain/maybePromise.js"
import { makeMemoryRateLimitStore } from "../services/memoryRateLimitStore.js"
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../domain/storeDeadline.js"
import { countHit, type WindowCount } from "../services/windowCount.js"
import type { RateLimitStoreService } from "../services/RateLimitStore.js"
import type { DocumentedMiddleware } from "../openapi/endpoint.js"
import { RATE_LIMIT_HEADERS } from "../openapi/headers.js"

export interface RateLimitOptions {
  /** Length of a window in milliseconds. Default 60,000. */
  readonly windowMs?: number
  /** Requests allowed per key and window. Default 100. */
  readonly max?: number
  /** The key a request counts against; null or undefined exempts the request. Default: the client address. */
  readonly keyBy?: (ctx: ServeContext) => string | null | undefined
  /**
   * Where counts live. Default: the API's `RateLimitStore` service (a memory store per API, or the
   * store a `layer` in the config provides, e.g. `redisRateLimitStoreLayer`); a Redis store shares
   * limits across processes.
   */
  readonly store?: RateLimitStoreService
  /**
   * Proxies in front of the server whose `X-Forwarded-For` entries are believed: `true` is one.
   * Default false: only the socket address counts, so clients cannot pick their own key.
   */
  readonly trustProxy?: boolean | number
  /**
   * When the store fails (an error, or no answer within `storeTimeoutMs`): true (default) counts the
   * window in this process's memory instead, so at most `max` requests per process pass, and logs;
   * false answers 503.
   */
  readonly failOpen?: boolean
  /**
   * Milliseconds an async store (Redis) may take to answer before it counts as failed (default 250),
   * also when the server accepted the command and then stalls. Time this process's own event loop
   * ran behind (a burst) is added, so a healthy store is not failed by its caller's load. The memory
   * store answers at once.
   */
  readonly storeTimeoutMs?: number
  /** The 429 answer's message. Default: "Too many requests: the limit is {max} per {windowMs} ms". */
  readonly message?: string
  /**
   * false: no `X-RateLimit-*` headers on the answers (nor in the OpenAPI document); a 429 still
   * carries `Retry-After`. Default true.
   */
  readonly headers?: boolean
}

/** What `ctx.locals._rateLimit` holds after a limiter counted the request (as in @hypequery/serve). */
interface RateLimitInfo {
  readonly limit: number
  /** Requests left in the window, after this one. */
  readonly remaining: number
  /** Milliseconds until the window ends. */
  readonly resetMs: number
}

/**
 * Throws, with what to change, on options that could not work: every comparison with NaN is false,
 * so a max or windowMs read from an unset variable would otherwise let every request through.
 */
const checkRateLimit = (max: number, windowMs: number): void => {
  if (!(Number.isInteger(max) && max >= 0)) {
    throw new TypeError(`rateLimit: max must be a whole number of requests per window, at least 0 (e.g. 100), not ${max}.`)
  }
  if (!(windowMs > 0 && Number.isFinite(windowMs))) {
    throw new TypeError(`rateLimit: windowMs must be a positive number of milliseconds (e.g. 60_000), not ${windowMs}.`)
  }
}

/**
 * On a `rateLimit()` given no store: binds it to a store. The pipeline calls it with its API's
 * `RateLimitStore` when it compiles an endpoint; the same store always gives the same middleware.
 */
const BIND_STORE = Symbol("queryserve.rateLimit.bindStore")

type StoreBindable = DocumentedMiddleware & { readonly [BIND_STORE]?: (store: RateLimitStoreService) => DocumentedMiddleware }

/** A middleware as it runs for an API whose RateLimitStore is `store`. */
export const withApiStore = (middleware: ServeMiddleware, store: RateLimitStoreService): ServeMiddleware =>
  (middleware as StoreBindable)[BIND_STORE]?.(store) ?? middleware

// Each storeless rateLimit() counts under its own prefix in the shared store; the n-th one of a
// program is the n-th in each of its processes, so processes on one Redis count together.
let storelessLimiters = 0

/**
 * Fixed-window rate limiting. Every response of a limited endpoint carries `X-RateLimit-Limit`,
 * `-Remaining` and `-Reset` (seconds until the window ends) unless `headers: false`, and
 * `ctx.locals._rateLimit` tells later middleware and the handler the same; over the limit it answers
 * 429 RATE_LIMITED with `Retry-After`. Throws a TypeError when `max` or `windowMs` could not work.
 */
export const rateLimit = (options: RateLimitOptions = {}): DocumentedMiddleware => {
  const windowMs = options.windowMs ?? 60_000
  const max = options.max ?? 100
  checkRateLimit(max, windowMs)
  if (options.store !== undefined) return limiter(options, options.store, "")
  const prefix = `rl${++storelessLimiters}:`
  const bound = new WeakMap<RateLimitStoreService, DocumentedMiddleware>()
  const bindStore = (store: RateLimitStoreService): DocumentedMiddleware => {
    let middleware = bound.get(store)
    if (middleware === undefined) bound.set(store, (middleware = limiter(options, store, prefix)))
    return middleware
  }
  // Run outside a pipeline (called by hand), it counts in a memory store of its own.
  let own: DocumentedMiddleware | undefined
  const unbound: ServeMiddleware = (ctx, next) => (own ??= limiter(options, makeMemoryRateLimitStore(), ""))(ctx, next)
  return Object.assign(unbound, { ...documented(options), [BIND_STORE]: bindStore })
}

/** Endpoints behind a rate limit list 429, and the X-RateLimit-* headers it sends, in the OpenAPI document. */
const documented = (options: RateLimitOptions) =>
  options.headers === false ? { errorStatuses: [429] } : { errorStatuses: [429], responseHeaders: RATE_LIMIT_HEADERS }

const limiter = (options: RateLimitOptions, store: RateLimitStoreService, prefix: string): DocumentedMiddleware => {
  const windowMs = options.windowMs ?? 60_000
  const max = options.max ?? 100
  const trustedHops = trustedHopCount(options.trustProxy)
  const keyBy = options.keyBy ?? ((ctx: ServeContext) => clientAddress(ctx.request, trustedHops) ?? "unknown")
  const failOpen = options.failOpen ?? true
  const storeTimeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS
  const timeoutMessage = `The rate-limit store did not answer within ${storeTimeoutMs} ms`
  const limit = String(max)
  const sendHeaders = options.headers !== false
  let storeFailing = false
  // What this process knows of each key's window for when the store fails: the highest shared count
  // it was told, and the requests it let through on its own count since (which the store never saw).
  const sharedSeen = makeMemoryRateLimitStore()
  const passedAlone = makeMemoryRateLimitStore()
  const message = options.message ?? `Too many requests: the limit is ${max} per ${windowMs} ms`
  const tooMany = (retryAfterSeconds: number) => new RateLimited({ message, retryAfterSeconds })

  const admit = (ctx: ServeContext, next: () => MaybePromise<unknown>, { count, ttlMs }: WindowCount) => {
    // A store that cannot tell the TTL yet (first hit) gets the full window.
    const resetMs = ttlMs > 0 ? ttlMs : windowMs
    const resetSeconds = Math.ceil(resetMs / 1000)
    const remaining = Math.max(0, max - count)
    const info: RateLimitInfo = { limit: max, remaining, resetMs }
    ctx.locals._rateLimit = info
    if (sendHeaders) {
      ctx.setHeader("x-ratelimit-limit", limit)
      ctx.setHeader("x-ratelimit-remaining", String(remaining))
      ctx.setHeader("x-ratelimit-reset", String(resetSeconds))
    }
    if (count > max) throw tooMany(resetSeconds)
    return next()
  }

  /** The store's answer, with what this process let through uncounted during an outage in this window. */
  const admitShared = (ctx: ServeContext, key: string, next: () => MaybePromise<unknown>, shared: WindowCount) => {
    if (storeFailing) {
      storeFailing = false
      console.error("[queryserve] rate-limit store answers again; counting resumed")
    }
    sharedSeen.observe(key, shared.count, shared.ttlMs > 0 ? shared.ttlMs : windowMs)
    return admit(ctx, next, { count: shared.count + passedAlone.count(key), ttlMs: shared.ttlMs })
  }

  /**
   * Counts the hit in this process, from the last shared count it saw: never "unlimited". The answer
   * carries no X-RateLimit-* headers, since the shared count is unknown.
   */
  const admitAlone = (key: string, next: () => MaybePromise<unknown>) => {
    const windowLeft = passedAlone.getTtl(key) || sharedSeen.getTtl(key) || windowMs
    if (sharedSeen.count(key) + passedAlone.count(key) >= max) throw tooMany(Math.ceil(windowLeft / 1000))
    passedAlone.increment(key, windowLeft)
    return next()
  }

  const storeFailed = (key: string, error: unknown, next: () => MaybePromise<unknown>): MaybePromise<unknown> => {
    // Logged once per outage: a down store under load must not flood the log.
    if (!storeFailing) {
      console.error("[queryserve] rate-limit store failed; " + (failOpen ? "counting in this process's memory (at most max per process)" : "answering 503"), error)
    }
    storeFailing = true
    if (failOpen) return admitAlone(key, next)
    throw new ServiceUnavailable({ message: "Rate limiting is unavailable; try again later" })
  }

  const middleware: ServeMiddleware = (ctx, next) => {
    const key = keyBy(ctx)
    if (key === null || key === undefined) return next()
    let counted: MaybePromise<WindowCount>
    try {
      counted = countHit(store, prefix + key, windowMs)
    } catch (error) {
      return storeFailed(key, error, next)
    }
    if (!isPromiseLike(counted)) return admit(ctx, next, counted)
    return withDeadline(counted, storeTimeoutMs, timeoutMessage).then(
      (shared) => admitShared(ctx, key, next, shared),
      (error: unknown) => storeFailed(key, error, next)
    )
  }
  return Object.assign(middleware, documented(options))
}
