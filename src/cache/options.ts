import type * as Layer from "effect/Layer"
import type { ResultCacheStore } from "./ResultCacheStore.js"

/** `resultCache`: options of the server-side result cache. */
export interface ResultCacheOptions {
  /**
   * Where entries live. Default: an LRU in this process, bounded by `maxEntries` and `maxBytes`.
   * `redisResultCacheStore({ url })` shares them between processes and hosts.
   */
  readonly store?: Layer.Layer<ResultCacheStore, unknown>
  /** Most entries of the default memory store (default 10,000). */
  readonly maxEntries?: number
  /** Most bytes of the default memory store (default 64 MiB). */
  readonly maxBytes?: number
  /**
   * This API's name in the keys of a shared store (Redis) without a `prefix` of its own. Default: a
   * digest of the base path, the endpoints' keys and methods, and the OpenAPI title and version,
   * which every process of the API shares. Two APIs that define the same endpoints over different
   * data must name themselves.
   */
  readonly namespace?: string
}
