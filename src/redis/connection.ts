import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port/db[?password=…]`; never logged as given (see `redactUrl`). */
  readonly url: string
  /** What the connection is for, in log lines: "rate-limit store", "result cache". */
  readonly label: string
  /**
   * Milliseconds a command may wait to be sent (default 1000). node-redis stops counting once a
   * command is written, so callers that must not hang on a stalled server add `withDeadline`.
   */
  readonly commandTimeoutMs?: number
}

/** Query parameters that carry a credential in the URL forms Redis clients accept (`?password=`, `?auth=`, …). */
const SECRET_PARAMETER = /pass|auth|secret|token|key/i

/**
 * `url` with its user, its password and every credential query parameter (`?password=…`) replaced by
 * `***`; an unparsable URL is not echoed at all.
 */
const redactUrl = (url: string): string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "<unparsable Redis URL>"
  }
  if (parsed.username !== "" || parsed.password !== "") {
    parsed.username = "***"
    parsed.password = ""
  }
  for (const name of new Set(parsed.searchParams.keys())) {
    if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, "***")
  }
  return parsed.toString()
}

const decoded = (value: string): string => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** The secrets `redactUrl` hides (the password, credential parameters), as written and decoded: a client library may quote either. */
const secretsOf = (url: string): ReadonlyArray<string> => {
  if (!URL.canParse(url)) return []
  const parsed = new URL(url)
  const params = [...parsed.searchParams].filter(([name]) => SECRET_PARAMETER.test(name)).map(([, value]) => value)
  // searchParams values are decoded already; the password is not.
  return [parsed.password, decoded(parsed.password), ...params].filter((secret) => secret.length > 0)
}

/** `text` (an error message) with `url` redacted, and any of its secrets quoted on their own replaced by `***`. */
const redactText = (text: string, url: string): string =>
  secretsOf(url).reduce((redacted, secret) => redacted.replaceAll(secret, "***"), text.replaceAll(url, redactUrl(url)))

/** Reconnection backoff: 50 ms doubling, at most 2 s. */
const backoff = (retries: number): number => Math.min(50 * 2 ** retries, 2000)

/**
 * How long closing waits for a connection attempt in flight to end (ms). Long enough for a Redis that
 * answers, short enough that one that never does cannot hold a dispose.
 */
const CLOSE_WAIT_MS = 500

/**
 * A node-redis client that fails fast while Redis is down (no offline queue: commands reject at once
 * instead of waiting for a reconnection), reconnects with backoff, and logs an outage once and its
 * recovery once, naming the server by its redacted URL. Connecting starts at once and is not awaited:
 * `connecting` settles when the first attempt ends (it never rejects). The `redis` package is
 * imported here, when a connection is opened, not when queryserve is.
 */
const openRedisConnection = async (options: RedisConnectionOptions) => {
  const { createClient } = await import("redis")
  const shown = redactUrl(options.url)
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? 1000 },
    socket: { reconnectStrategy: backoff }
  })
  let down = false
  client.on("ready", () => {
    if (!down) return
    down = false
    console.error(`[queryserve] Redis ${options.label} at ${shown} is reachable again`)
  })
  client.on("error", (error: unknown) => {
    if (down) return
    down = true
    // The message alone, with the URL redacted wherever a client library may have put it.
    const reason = redactText(error instanceof Error ? error.message : String(error), options.url)
    console.error(`[queryserve] Redis ${options.label} at ${shown} is unreachable; retrying (${reason})`)
  })
  // Rejects only when closed before the first connection; the error listener has reported why.
  const connecting = client.connect().then(() => undefined, () => undefined)
  return { client, connecting }
}

type OpenConnection = Awaited<ReturnType<typeof openRedisConnection>>

/**
 * Destroys the client at once: that stops reconnecting and closes a connection that is up. An attempt
 * in flight may still finish afterwards, and node-redis keeps the socket it opened then, so the client
 * is destroyed again when the attempt ends; dispose waits for that at most CLOSE_WAIT_MS.
 */
const closeRedisConnection = ({ client, connecting }: OpenConnection): Effect.Effect<void> =>
  Effect.sync(() => client.destroy()).pipe(
    // A release runs uninterruptibly: only an interruptible wait can be cut short by the time limit.
    Effect.zipRight(Effect.interruptible(Effect.promise(() => connecting.then(() => client.destroy())))),
    Effect.timeoutOption(CLOSE_WAIT_MS),
    Effect.asVoid
  )

/** A connection as `openRedisConnection` describes it, closed with the scope, even while still connecting. */
export const scopedRedisConnection = (options: RedisConnectionOptions): Effect.Effect<RedisConnection, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => openRedisConnection(options)), closeRedisConnection).pipe(
    Effect.map(({ client }) => client)
  )

/** The node-redis client `scopedRedisConnection` gives. */
type RedisConnection = OpenConnection["client"]
