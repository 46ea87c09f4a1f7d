import type { RateLimitStoreService } from "../services/RateLimitStore.js"

/**
 * Throttles credential guessing: failed authentications (401 `invalid_credentials`) are counted per
 * client address, and once `max` is reached within `windowMs` that address gets 429 `RATE_LIMITED`
 * with `Retry-After` before any strategy runs. Requests without credentials and public endpoints are
 * not counted.
 */
export interface AuthFailureLimitOptions {
  /** Failed authentications allowed per address and window. */
  readonly max: number
  /** Length of a window in milliseconds. */
  readonly windowMs: number
  /**
   * Shares the counts between processes (a Redis store). Default: counted in this process only. Each
   * process also keeps its own count, so no store round trip is made for a request to be admitted.
   */
  readonly store?: RateLimitStoreService
  /** Proxies whose `X-Forwarded-For` entry is the address (as `rateLimit`'s). Default false: the request's address. */
  readonly trustProxy?: boolean | number
  /** Milliseconds an async store call may take before it counts as failed (default 250). */
  readonly storeTimeoutMs?: number
}

/** `security`: how much a refusal tells the caller. */
export interface SecurityOptions {
  /**
   * A 403 for a missing role or scope also lists the caller's own (`details.actual`), as
   * @hypequery/serve's option of this name does. Default false: a refusal tells what is required only.
   */
  readonly verboseAuthErrors?: boolean
}
