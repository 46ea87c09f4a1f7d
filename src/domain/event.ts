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

const cacheNote = (event: ServeQueryEvent): string =>
  event.cacheHit === undefined ? "" : event.cacheHit ? ", cache hit" : ", cache miss"

/**
 * `✓ GET /api/analytics/revenue → 200 (12ms)`, `(12ms, cache hit)` on cached endpoints, `✗ … - message`,
 * `[mcp]` after a tool call's; null for started events.
 */
export const formatQueryEvent = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const line = `${event.method} ${event.path} → ${event.responseStatus ?? (event.status === "error" ? 500 : 200)} (${Math.round(event.durationMs ?? 0)}ms${cacheNote(event)})` +
    (event.transport === "mcp" ? " [mcp]" : "")
  return event.status === "completed" ? `✓ ${line}` : `✗ ${line} - ${errorMessage(event)}`
}

/** Characters JSON must escape (lone surrogates included): a string without any is written as is. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

const jsonString = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`)

/**
 * A duration in ms to 0.01 ms, as JSON: the same text as `String(Math.round(ms * 100) / 100)`, but
 * from integers, whose formatting is much cheaper than a fraction's.
 */
const hundredths = (ms: number): string => {
  const total = Math.round(ms * 100)
  if (!Number.isSafeInteger(total) || total < 0) return Number.isFinite(ms) ? String(total / 100) : "null"
  const whole = Math.floor(total / 100)
  const fraction = total % 100
  if (fraction === 0) return `${whole}`
  return fraction % 10 === 0 ? `${whole}.${fraction / 10}` : `${whole}.${fraction < 10 ? "0" : ""}${fraction}`
}

const jsonNumber = (value: number): string => (Number.isFinite(value) ? `${value}` : "null")

/**
 * One JSON object per event (durationMs to 0.01 ms; `cacheHit` on cached endpoints; timestamp = end
 * time, ISO 8601; `transport: "mcp"` after a tool call's); null for started events. Written by hand rather than by JSON.stringify of an object: it runs for every request, and
 * this is about twice as fast; strings that need escaping still go through JSON.stringify.
 */
export const formatQueryEventJSON = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const failed = event.status === "error"
  return `{"level":"${failed ? "error" : "info"}","msg":${jsonString(`${event.method} ${event.path}`)},"requestId":${
    jsonString(event.requestId)
  },"endpoint":${jsonString(event.endpointKey)},"status":${jsonNumber(event.responseStatus ?? (failed ? 500 : 200))},"durationMs":${
    hundredths(event.durationMs ?? 0)
  }${typeof event.cacheHit === "boolean" ? `,"cacheHit":${event.cacheHit}` : ""},"timestamp":"${isoTimestamp(event.endTime ?? event.startTime)}"${
    // Only tool calls say how they came: an HTTP line stays as it always was.
    event.transport === "mcp" ? `,"transport":"mcp"` : ""
  }${failed ? `,"error":${jsonString(errorMessage(event))}` : ""}}`
}

export const formatSlowQuery = (event: ServeQueryEvent, thresholdMs: number): string =>
  `[slow-query] ${event.method} ${event.path} (${event.endpointKey}) took ${Math.round(event.durationMs ?? 0)}ms (threshold: ${thresholdMs}ms)`
