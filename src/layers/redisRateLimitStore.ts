import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RateLimitStore } from "../services/RateLimitStore.js"
import { scopedRedisConnection } from "../redis/connection.js"
import type { WindowCount, WindowCountingStore } from "../services/windowCount.js"

interface ScriptArguments {
  readonly keys: Array<string>
  readonly arguments: Array<string>
}

/** The commands the store sends. A node-redis client (`createClient()` of `redis` v5+) has them. */
export interface RedisRateLimitClient {
  evalSha(sha1: string, options: ScriptArguments): Promise<unknown>
  eval(script: string, options: ScriptArguments): Promise<unknown>
  pTTL(key: string): Promise<number>
  del(key: string): Promise<number>
}

export interface RedisRateLimitStoreOptions {
  /**
   * A connected client. Create it with `disableOfflineQueue: true` so that while Redis is down
   * commands fail at once and `rateLimit` fails open or closed, instead of requests waiting for a
   * reconnection. A stalled Redis is cut short by `rateLimit`'s `storeTimeoutMs`.
   */
  readonly client: RedisRateLimitClient
  /** Prepended to every key. Default `queryserve:ratelimit:`. */
  readonly prefix?: string
}

/**
 * One atomic step per hit, so concurrent hits from any number of processes count exactly: the
 * window starts (PEXPIRE) when the count becomes 1. A key left without expiry (set by hand)
 * gets one too, so it can never block forever. It answers the count and the window's remaining
 * milliseconds together: one command, one round trip per hit.
 */
const INCREMENT_SCRIPT = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`

const INCREMENT_SHA1 = createHash("sha1").update(INCREMENT_SCRIPT).digest("hex")

const isMissingScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT")

/** The script's `{count, ttl}` reply. */
const windowCount = (reply: unknown): WindowCount => {
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error("unexpected reply from the Redis rate-limit script")
  return { count: Number(reply[0]), ttlMs: Math.max(0, Number(reply[1])) }
}

/** A RateLimitStore whose counters live in Redis: processes sharing it share their limits. */
export const makeRedisRateLimitStore = (options: RedisRateLimitStoreOptions): WindowCountingStore => {
  const { client } = options
  const prefix = options.prefix ?? "queryserve:ratelimit:"
  const hit = (key: string, windowMs: number): Promise<WindowCount> => {
    const args: ScriptArguments = { keys: [prefix + key], arguments: [String(Math.max(1, Math.ceil(windowMs)))] }
    // EVALSHA sends 40 bytes instead of the script; a server that has not cached it yet gets it once by EVAL.
    return client.evalSha(INCREMENT_SHA1, args)
      .catch((error: unknown) => (isMissingScript(error) ? client.eval(INCREMENT_SCRIPT, args) : Promise.reject(error)))
      .then(windowCount)
  }
  return {
    hit,
    increment: (key, windowMs) => hit(key, windowMs).then(({ count }) => count),
    // PTTL answers -2 for a missing key and -1 for one without expiry: both mean "no window".
    getTtl: (key) => client.pTTL(prefix + key).then((ms) => Math.max(0, ms)),
    reset: (key) => client.del(prefix + key).then(() => undefined)
  }
}

export interface RedisRateLimitStoreLayerOptions {
  /** `redis://[user:password@]host:port/db`; logged with user, password and `?password=` redacted. */
  readonly url: string
  readonly prefix?: string
  /**
   * A command not sent within this long fails (default 1000 ms). Once sent, node-redis waits for the
   * answer however long it takes: `rateLimit`'s `storeTimeoutMs` (default 250 ms) bounds that.
   */
  readonly commandTimeoutMs?: number
}

/**
 * A RateLimitStore on its own Redis connection (`scopedRedisConnection`), closed with the layer's scope
 * (also when that comes before the connection is up).
 * The layer does not wait for Redis: until the connection is up (and while it is down) the store fails
 * fast, and `rateLimit` fails open or closed as configured. An outage is logged once, and its end.
 * The layer builds asynchronously: `redis` is imported then, not when queryserve is.
 */
export const redisRateLimitStoreLayer = (options: RedisRateLimitStoreLayerOptions): Layer.Layer<RateLimitStore> =>
  Layer.scoped(
    RateLimitStore,
    scopedRedisConnection({ url: options.url, label: "rate-limit store", commandTimeoutMs: options.commandTimeoutMs }).pipe(
      Effect.map((client) => makeRedisRateLimitStore({ client, prefix: options.prefix }))
    )
  )
