/**
 * How a request reached the endpoint: `http` for its own route, `mcp` for a tool call over the Model
 * Context Protocol. In-process calls (`execute`, `run`) carry none.
 */
export type QueryTransport = "http" | "mcp"

/** One lifecycle event of an endpoint execution, as `queryLogger` listeners receive it. */
export interface ServeQueryEvent {
  readonly requestId: string
  readonly endpointKey: string
  readonly path: string
  readonly method: string
  readonly status: "started" | "completed" | "error"
  readonly startTime: number
  readonly endTime?: number
  readonly durationMs?: number
  readonly input?: unknown
  readonly responseStatus?: number
  readonly error?: Error
  readonly result?: unknown
  /** On completed events of endpoints with a result cache: true for a hit, false for a miss. */
  readonly cacheHit?: boolean
  readonly transport?: QueryTransport
}

/** ISO 8601 text of a time in ms; the lines of one millisecond (many under load) share one Date formatting. */
const isoTimestamp = (() => {
  let lastMs = Number.NaN
  let lastText = ""
  return (time: number): string => {
    const ms = Math.floor(time)
    if (ms !== lastMs) {
      lastMs = ms
      lastText = new Date(ms).toISOString()
    }
    return lastText
  }
})()

const errorMessage = (event: ServeQueryEvent): string => event.error?.message ?? `HTTP ${event.responseStatus ?? 500}`

/** `✓ GET /api/analytics/revenue → 200 (12ms)`, `✗ … - message`, `[mcp]` after a tool call's; null for started events. */
export const formatQueryEvent = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const line = `${event.method} ${event.path} → ${event.responseStatus ?? (event.status === "error" ? 500 : 200)} (${Math.round(event.durationMs ?? 0)}ms)` +
    (event.transport === "mcp" ? " [mcp]" : "")
  return event.status === "completed" ? `✓ ${line}` : `✗ ${line} - ${errorMessage(event)}`
}

/** One JSON object per event (durationMs to 0.01 ms; timestamp = end time, ISO 8601); null for started events. */
export const formatQueryEventJSON = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const failed = event.status === "error"
  // One literal with every key (error undefined is left out by JSON.stringify): no spread per line.
  return JSON.stringify({
    level: failed ? "error" : "info",
    msg: `${event.method} ${event.path}`,
    requestId: event.requestId,
    endpoint: event.endpointKey,
    status: event.responseStatus ?? (failed ? 500 : 200),
    durationMs: Math.round((event.durationMs ?? 0) * 100) / 100,
    timestamp: isoTimestamp(event.endTime ?? event.startTime),
    // Only tool calls say how they came: an HTTP line stays as it always was.
    transport: event.transport === "mcp" ? "mcp" : undefined,
    error: failed ? errorMessage(event) : undefined
  })
}

export const formatSlowQuery = (event: ServeQueryEvent, thresholdMs: number): string =>
  `[slow-query] ${event.method} ${event.path} (${event.endpointKey}) took ${Math.round(event.durationMs ?? 0)}ms (threshold: ${thresholdMs}ms)`
