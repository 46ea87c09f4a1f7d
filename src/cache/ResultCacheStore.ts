import * as Context from "effect/Context"
import type { MaybePromise } from "../domain/maybePromise.js"
import type { ResultCacheKey, StoredResult } from "../stages/storedResult.js"

/** Which entries `invalidate` drops: those of an endpoint, of a tenant, of both, or (empty) all. */
export interface ResultCacheFilter {
  /** An endpoint's key. */
  readonly key?: string
  readonly tenantId?: string
}

export interface ResultCacheStoreStats {
  readonly entries: number
  /** What the entries take in the store, as the store counts it. */
  readonly bytes: number
}

/**
 * Where the result cache keeps its entries. The memory store answers synchronously, so a hit
 * stays on the synchronous path; a shared store (Redis) answers with promises. A store may
 * return the same StoredResult for every hit of an entry (the pipeline memoizes its ETag on it).
 */
export interface ResultCacheStoreService {
  /** The entry (with its `expiresAt`), or undefined when there is none or it expired. */
  get(key: ResultCacheKey): MaybePromise<StoredResult | undefined>
  /** Stores (or replaces) an entry that expires after `ttlMs`. */
  set(key: ResultCacheKey, result: StoredResult, ttlMs: number): MaybePromise<void>
  /** Drops the entries the filter matches; resolves how many it dropped. */
  invalidate(filter: ResultCacheFilter): MaybePromise<number>
  stats(): MaybePromise<ResultCacheStoreStats>
}

export class ResultCacheStore extends Context.Tag("queryserve/ResultCacheStore")<ResultCacheStore, ResultCacheStoreService>() {}
