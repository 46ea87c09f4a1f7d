import { createClient } from "redis"

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` */
  readonly url: string
  /** What the connection is for, in log lines (e.g. "result cache"). */
  readonly label: string
  /** A command unanswered for this long fails; default: none (callers put their own deadline on each call). */
  readonly commandTimeoutMs?: number
}

const createConnection = (url: string, commandTimeoutMs: number | undefined) =>
  createClient({
    url,
    disableOfflineQueue: true,
    ...(commandTimeoutMs === undefined ? {} : { commandOptions: { timeout: commandTimeoutMs } }),
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) }
  })

export type RedisConnection = ReturnType<typeof createConnection>

/** The URL without its user and password, for log lines. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    return parsed.toString()
  } catch {
    return "(an unparseable Redis URL)"
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * A node-redis client that connects in the background and never queues commands while
 * disconnected (`disableOfflineQueue`): while Redis is down every command fails at once, so the
 * caller falls back (fail open, query without the cache) instead of requests waiting for a
 * reconnection. It reconnects with backoff (50 ms doubling to 2 s) and logs an outage once, with
 * the URL stripped of credentials. Close it with `destroy()`.
 */
export const openRedisConnection = (options: RedisConnectionOptions): RedisConnection => {
  const client = createConnection(options.url, options.commandTimeoutMs)
  let up = true
  client.on("ready", () => (up = true))
  client.on("error", (error: unknown) => {
    if (!up) return
    up = false
    console.error(`[queryserve] ${options.label}: Redis at ${redactUrl(options.url)} is unreachable (${messageOf(error)}); retrying`)
  })
  // Rejects only when closed before the first connection; the error listener has reported why.
  client.connect().catch(() => undefined)
  return client
}
