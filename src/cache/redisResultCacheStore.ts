import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { scopedRedisConnection } from "../redis/connection.js"
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../domain/storeDeadline.js"
import { keyPattern } from "./cacheKey.js"
import { ResultCacheNamespace } from "./cacheNamespace.js"
import { ResultCacheStore, type ResultCacheStoreService } from "./ResultCacheStore.js"
import { type ResultCacheKey, StoredResult } from "../stages/storedResult.js"

/** The one command the store sends through. A node-redis client (`createClient()` of `redis` v5+) has it. */
export interface RedisResultCacheClient {
  sendCommand(args: Array<string>): Promise<unknown>
}

export interface RedisResultCacheStoreOptions {
  /**
   * Prepended to every key. Default `queryserve:cache:<namespace>:`, the namespace naming the API
   * that uses the store (`resultCache.namespace`, else a digest of its definition); `queryserve:cache:`
   * for a store made outside an API.
   */
  readonly prefix?: string
  /**
   * Deadline of each Redis call, ms (default 250). Past it the call counts as failed: a request
   * runs its query instead of waiting for a stalled Redis.
   */
  readonly timeoutMs?: number
}

/** A connection the store opens (and closes with its layer), or a connected client you manage. */
export type RedisResultCacheConnection = { readonly url: string } | { readonly client: RedisResultCacheClient }

const DEFAULT_PREFIX = "queryserve:cache:"

/** The options with the default prefix of the API the layer is built for; a prefix given wins. */
const forApi = (options: RedisResultCacheStoreOptions) =>
  Effect.map(ResultCacheNamespace, (namespace): RedisResultCacheStoreOptions =>
    options.prefix !== undefined || namespace === "" ? options : { ...options, prefix: `${DEFAULT_PREFIX}${namespace}:` })
const SCAN_COUNT = "1000"

/** Backslash before the characters a Redis pattern reads specially, so a prefix matches as written. */
const literalPattern = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&")

/**
 * An entry as Redis holds it: `@<expiresAt>` and a line break before the JSON text (which never
 * starts with `@`), so a hit learns what is left of its TTL with the one GET. A value without it
 * has no known expiry.
 */
const entryText = (result: StoredResult, ttlMs: number): string => `@${result.expiresAt ?? Date.now() + ttlMs}\n${result.json}`

/** Whether `text` is JSON: checked only for entries without an expiry line, which this store does not write any more. */
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * The entry a GET answered, or a miss (which the next run overwrites): for a value that is no entry
 * of ours (not JSON, an unreadable expiry line) and for one past its expiry time.
 */
const storedEntry = (reply: unknown): StoredResult | undefined => {
  if (typeof reply !== "string") return undefined
  if (!reply.startsWith("@")) return isJson(reply) ? new StoredResult(reply) : undefined
  const end = reply.indexOf("\n")
  if (end < 0) return undefined
  const expiresAt = Number(reply.slice(1, end))
  return Number.isFinite(expiresAt) && expiresAt > Date.now() ? new StoredResult(reply.slice(end + 1), expiresAt) : undefined
}

const scanReply = (reply: unknown): { readonly cursor: string; readonly keys: ReadonlyArray<string> } => {
  if (!Array.isArray(reply) || !Array.isArray(reply[1])) throw new Error("unexpected SCAN reply from Redis")
  return { cursor: String(reply[0]), keys: (reply[1] as ReadonlyArray<unknown>).map(String) }
}

/**
 * A ResultCacheStore in Redis: entries are strings (expiry time and JSON) that expire in Redis
 * itself (SET … PX), so every process and host using the same Redis and prefix shares them. A key is
 * `<prefix><endpoint>:<scope>:<digest>`, with the endpoint and the tenant percent-encoded: no key
 * part holds a separator or a pattern character, so invalidation by endpoint and/or tenant is one
 * SCAN pattern, and the keys it finds are dropped with UNLINK. Every call has a deadline.
 */
export const makeRedisResultCacheStore = (
  client: RedisResultCacheClient,
  options: RedisResultCacheStoreOptions = {}
): ResultCacheStoreService => {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS
  const send = (args: Array<string>): Promise<unknown> =>
    withDeadline(client.sendCommand(args), timeoutMs, `Redis did not answer ${args[0]} within ${timeoutMs} ms`)

  /**
   * Whether a key the pattern matched is one of this store's: `<endpoint>:<scope>:<input>` after the
   * prefix, two separators exactly. A pattern's `*` also matches the keys of a longer prefix that
   * begins with this one (`app:v2:` under `app:`), which have more.
   */
  const ownKey = (key: string): boolean => {
    const first = key.indexOf(":", prefix.length)
    const second = first < 0 ? -1 : key.indexOf(":", first + 1)
    return second >= 0 && key.indexOf(":", second + 1) < 0
  }

  /** Calls `visit` with each batch of this store's keys the pattern matches (SCAN visits every key present throughout). */
  const scan = async (pattern: string, visit: (keys: ReadonlyArray<string>) => Promise<void>): Promise<void> => {
    let cursor = "0"
    do {
      const reply = scanReply(await send(["SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT]))
      cursor = reply.cursor
      const keys = reply.keys.filter(ownKey)
      if (keys.length > 0) await visit(keys)
    } while (cursor !== "0")
  }

  return {
    get: (key: ResultCacheKey) => send(["GET", prefix + key.id]).then(storedEntry),
    set: (key, result, ttlMs) =>
      send(["SET", prefix + key.id, entryText(result, ttlMs), "PX", String(Math.max(1, Math.ceil(ttlMs)))]).then(() => undefined),
    invalidate: async (filter) => {
      let dropped = 0
      await scan(literalPattern(prefix) + keyPattern(filter), async (keys) => {
        dropped += Number(await send(["UNLINK", ...keys]))
      })
      return dropped
    },
    stats: async () => {
      let entries = 0
      let bytes = 0
      await scan(`${literalPattern(prefix)}*`, async (keys) => {
        const lengths = await Promise.all(keys.map((key) => send(["STRLEN", key])))
        for (let i = 0; i < keys.length; i++) {
          // A key that expired between SCAN and STRLEN answers 0: it is no entry.
          const length = Number(lengths[i])
          if (length === 0) continue
          entries++
          bytes += Buffer.byteLength(keys[i]!) + length
        }
      })
      return { entries, bytes }
    }
  }
}

/**
 * A ResultCacheStore in Redis, shared by every process that uses the same Redis and prefix: without
 * a `prefix`, by the processes of one API (see `forApi`). With `{ url }` the layer opens its own
 * connection (in the background: until it is up, and while it is down, every call fails at once and
 * requests run their queries) and closes it with the layer's scope; with `{ client }` it uses yours as it is.
 */
export const redisResultCacheStore = (
  connection: RedisResultCacheConnection,
  options: RedisResultCacheStoreOptions = {}
): Layer.Layer<ResultCacheStore> =>
  "client" in connection
    ? Layer.effect(ResultCacheStore, Effect.map(forApi(options), (settled) => makeRedisResultCacheStore(connection.client, settled)))
    : Layer.scoped(
      ResultCacheStore,
      Effect.zipWith(
        forApi(options),
        scopedRedisConnection({ url: connection.url, label: "result cache" }),
        (settled, client) => makeRedisResultCacheStore(client, settled)
      )
    )
