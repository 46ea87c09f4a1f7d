import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import type { AuthFailureLimitOptions } from "./options.js"
import { RateLimited, type ServeError, toServeError } from "../domain/errors.js"
import { clientAddress, type ServeRequest, trustedHopCount } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { makeMemoryRateLimitStore, type MemoryRateLimitStore } from "../services/memoryRateLimitStore.js"
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../domain/storeDeadline.js"
import type { AuthServiceShape } from "../services/AuthService.js"
import type { RateLimitStoreService } from "../services/RateLimitStore.js"

/** Throws, with what to change, on options that could not work. */
export const checkAuthFailureLimit = (options: AuthFailureLimitOptions): void => {
  if (!(Number.isInteger(options.max) && options.max >= 1)) {
    throw new Error(`defineServe: authFailureLimit.max must be a whole number of failures, at least 1 (e.g. 10), not ${options.max}.`)
  }
  if (!(options.windowMs > 0 && Number.isFinite(options.windowMs))) {
    throw new Error(`defineServe: authFailureLimit.windowMs must be a positive number of milliseconds (e.g. 15 * 60_000), not ${options.windowMs}.`)
  }
}

/**
 * A credential-guessing failure: a 401 other than "no credentials" (which tells a guesser nothing,
 * and is what a browser's first call without a token gets).
 */
const isAuthFailure = (error: ServeError): boolean =>
  error._tag === "Unauthorized" ? error.reason !== "missing_credentials" : error._tag === "ServeHttpError" && error.status === 401

/**
 * `authFailureLimit`: counts failed authentications per client address. Admitting a request reads
 * this process's count only (a Map lookup; addresses without failures are not in it), so callers
 * who authenticate fine never wait for a store. With a shared store, each failure also counts
 * there, and the shared count it answers is taken in: a process learns of failures elsewhere at its
 * own next failure from that address.
 */
class AuthFailureGuard {
  private readonly local: MemoryRateLimitStore = makeMemoryRateLimitStore()
  private readonly shared: RateLimitStoreService | undefined
  /** In the API's store, beside its rate limits, the counts of this guard are kept under their own prefix. */
  private readonly sharedPrefix: string
  private readonly trustedHops: number
  private readonly storeTimeoutMs: number
  private storeFailing = false
  private warnedNoAddress = false

  constructor(private readonly options: AuthFailureLimitOptions, apiStore: RateLimitStoreService | undefined) {
    checkAuthFailureLimit(options)
    this.shared = options.store ?? apiStore
    this.sharedPrefix = options.store === undefined ? "af:" : ""
    this.trustedHops = trustedHopCount(options.trustProxy)
    this.storeTimeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS
  }

  /** Throws 429 RATE_LIMITED when the request's address has used up its failures. */
  admit(request: ServeRequest): void {
    const address = clientAddress(request, this.trustedHops)
    if (address === undefined || this.local.count(address) < this.options.max) return
    const retryAfterSeconds = Math.max(1, Math.ceil(this.local.getTtl(address) / 1000))
    throw new RateLimited({
      message: `Too many failed authentication attempts from this address; try again in ${retryAfterSeconds} s`,
      retryAfterSeconds
    })
  }

  /** Counts a failed authentication of the request's address. Never throws and never delays the answer. */
  failed(request: ServeRequest): void {
    const address = clientAddress(request, this.trustedHops)
    if (address === undefined) return this.noAddress()
    this.local.increment(address, this.options.windowMs)
    if (this.shared === undefined) return
    try {
      const count = this.shared.increment(this.sharedPrefix + address, this.options.windowMs)
      const ttlMs = this.shared.getTtl(this.sharedPrefix + address)
      if (!isPromiseLike(count) && !isPromiseLike(ttlMs)) return this.learned(address, count, ttlMs)
      withDeadline(Promise.all([count, ttlMs]), this.storeTimeoutMs, `The auth-failure store did not answer within ${this.storeTimeoutMs} ms`)
        .then(([count, ttlMs]) => this.learned(address, count, ttlMs), (error: unknown) => this.storeFailed(error))
    } catch (error) {
      this.storeFailed(error)
    }
  }

  private learned(address: string, count: number, ttlMs: number): void {
    if (this.storeFailing) {
      this.storeFailing = false
      console.error("[queryserve] auth-failure store answers again")
    }
    // A store that cannot tell the TTL yet (its window just started) gets the full window, as in `rateLimit`.
    this.local.observe(address, count, ttlMs > 0 ? ttlMs : this.options.windowMs)
  }

  /** This process's own count goes on; the shared one misses this failure. Logged once per outage. */
  private storeFailed(error: unknown): void {
    if (!this.storeFailing) console.error("[queryserve] auth-failure store failed; counting in this process only", error)
    this.storeFailing = true
  }

  /** Without an address there is nothing to count by: all such callers would share one count, and one guesser would lock out all. */
  private noAddress(): void {
    if (this.warnedNoAddress) return
    this.warnedNoAddress = true
    console.warn(
      "[queryserve] authFailureLimit: a failed authentication without a client address is not counted " +
        "(an in-process call, or the fetch handler without trustProxy behind a proxy that sets X-Forwarded-For)"
    )
  }
}

/**
 * `authenticator` under `authFailureLimit` (as is without it): before the strategies run, an address
 * that used up its failures gets 429; a failure they end in is counted. Strategies are only run for
 * routes that authenticate, so public endpoints are neither checked nor counted.
 */
export const limitAuthFailures = (
  authenticator: AuthServiceShape,
  options: AuthFailureLimitOptions | undefined,
  apiStore?: RateLimitStoreService
): AuthServiceShape => {
  if (options === undefined) return authenticator
  const guard = new AuthFailureGuard(options, apiStore)
  // At most one failure per HTTP request, and none for a refusal by strategies that accepted its
  // credentials: an MCP request authenticates for itself, then for each tool it lists or calls (each
  // endpoint's strategies, told that endpoint), all with the same credentials. A global key refused
  // by a tool's endpoint (granted some endpoints only) is no guess; a refusal by a strategy of the
  // endpoint's own, which never accepted them, is one, as it is on the endpoint's route.
  const countedRequests = new WeakSet<object>()
  const acceptedBy = new WeakMap<object, ReadonlyArray<AuthStrategy>>()
  const requestKey = (request: ServeRequest): object => {
    const raw = request.raw
    return typeof raw === "object" && raw !== null ? raw : request
  }
  const accepted = (request: ServeRequest, strategies: ReadonlyArray<AuthStrategy>, caller: ServeAuthContext | null): ServeAuthContext | null => {
    if (caller === null) return caller
    const key = requestKey(request)
    const before = acceptedBy.get(key)
    if (before === undefined) acceptedBy.set(key, strategies)
    else if (before !== strategies) acceptedBy.set(key, [...new Set([...before, ...strategies])])
    return caller
  }
  const counted = (request: ServeRequest, strategies: ReadonlyArray<AuthStrategy>, thrown: unknown): never => {
    if (isAuthFailure(toServeError(thrown))) {
      const key = requestKey(request)
      const trusted = acceptedBy.get(key)
      const known = trusted !== undefined && strategies.every((strategy) => trusted.includes(strategy))
      if (!known && !countedRequests.has(key)) {
        countedRequests.add(key)
        guard.failed(request)
      }
    }
    throw thrown
  }
  return {
    authenticate: (strategies, request, endpoint) => {
      if (strategies.length === 0) return authenticator.authenticate(strategies, request, endpoint)
      guard.admit(request)
      let caller: ReturnType<AuthServiceShape["authenticate"]>
      try {
        caller = authenticator.authenticate(strategies, request, endpoint)
      } catch (thrown) {
        return counted(request, strategies, thrown)
      }
      return isPromiseLike(caller)
        ? Promise.resolve(caller).then((found) => accepted(request, strategies, found), (thrown: unknown) => counted(request, strategies, thrown))
        : accepted(request, strategies, caller)
    }
  }
}
