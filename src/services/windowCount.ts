import { isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import type { RateLimitStoreService } from "./RateLimitStore.js"

/** What counting one hit learns: the key's count after it, and the milliseconds its window has left (0: unknown). */
export interface WindowCount {
  readonly count: number
  readonly ttlMs: number
}

/** A store that counts a hit and reads its window in one step: for Redis one command, one round trip, atomic. */
export interface WindowCountingStore extends RateLimitStoreService {
  hit(key: string, windowMs: number): MaybePromise<WindowCount>
}

const countsWindows = (store: RateLimitStoreService): store is WindowCountingStore =>
  typeof (store as Partial<WindowCountingStore>).hit === "function"

/**
 * Counts a hit of `key`: in one step where the store can, else by `increment` then `getTtl`, both
 * sent before either is awaited (a pipelining client sends them together).
 */
export const countHit = (store: RateLimitStoreService, key: string, windowMs: number): MaybePromise<WindowCount> => {
  if (countsWindows(store)) return store.hit(key, windowMs)
  const count = store.increment(key, windowMs)
  const ttlMs = store.getTtl(key)
  if (!isPromiseLike(count) && !isPromiseLike(ttlMs)) return { count, ttlMs }
  return Promise.all([count, ttlMs]).then(([count, ttlMs]) => ({ count, ttlMs }))
}
