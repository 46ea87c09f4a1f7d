import * as Layer from "effect/Layer"
import { makeMemoryResultCacheStore } from "./memoryResultCacheStore.js"
import { ResultCacheStore, type ResultCacheStoreService } from "./ResultCacheStore.js"

/** A store for tests: remote-like (it answers with promises), unbounded, observable, and able to fail on demand. */
export interface TestResultCacheStore extends ResultCacheStoreService {
  /** Calls so far, per method. */
  readonly calls: { readonly get: number; readonly set: number; readonly invalidate: number; readonly stats: number }
  /** The TTL of every `set` so far, in order. */
  readonly ttls: ReadonlyArray<number>
  /** From now on every call rejects with `error`; `undefined` makes the store work again. */
  failWith(error: unknown): void
}

/** The store behind `testResultCacheStore`: the memory store without bounds, behind promises. */
export const makeTestResultCacheStore = (): TestResultCacheStore => {
  const memory = makeMemoryResultCacheStore({ maxEntries: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER })
  const calls = { get: 0, set: 0, invalidate: 0, stats: 0 }
  const ttls: Array<number> = []
  let failure: { readonly error: unknown } | undefined
  const answer = <A>(method: keyof typeof calls, work: () => A): Promise<A> => {
    calls[method]++
    return failure === undefined ? Promise.resolve().then(work) : Promise.reject(failure.error)
  }
  return {
    get: (key) => answer("get", () => memory.get(key)),
    set: (key, result, ttlMs) => answer("set", () => {
      ttls.push(ttlMs)
      memory.set(key, result, ttlMs)
    }),
    invalidate: (filter) => answer("invalidate", () => memory.invalidate(filter)),
    stats: () => answer("stats", () => memory.stats()),
    calls,
    ttls,
    failWith: (error) => void (failure = error === undefined ? undefined : { error })
  }
}

/** Provides `store` (a fresh test store by default) as the ResultCacheStore. */
export const testResultCacheStore = (store: TestResultCacheStore = makeTestResultCacheStore()): Layer.Layer<ResultCacheStore> =>
  Layer.succeed(ResultCacheStore, store)
