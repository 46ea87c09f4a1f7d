import * as Context from "effect/Context"
import type { MaybePromise } from "../domain/maybePromise.js"

/**
 * Counters for fixed-window rate limiting. A shared implementation (Redis) makes limits hold
 * across processes.
 */
export interface RateLimitStoreService {
  /** Adds one to `key` and returns the new count; the window starts when the count becomes 1. */
  increment(key: string, windowMs: number): MaybePromise<number>
  /** Remaining milliseconds of the key's window, 0 when there is none. */
  getTtl(key: string): MaybePromise<number>
  /** Clears the counter. */
  reset(key: string): MaybePromise<void>
}

export class RateLimitStore extends Context.Tag("queryserve/RateLimitStore")<RateLimitStore, RateLimitStoreService>() {}
