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
  /** On completed events: the rows answered, for an array, a page's `data` or a streamed answer (counted as sent). */
  readonly rows?: number
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

/** The facts of one request that its log line names: an event has them, and so has the pipeline's own record. */
export type LoggedRequest = Pick<ServeQueryEvent, "requestId" | "endpointKey" | "path" | "method" | "startTime" | "transport">

const errorText = (event: ServeQueryEvent): string => event.error?.message ?? `HTTP ${event.responseStatus ?? 500}`

const cacheNote = (cacheHit: boolean | undefined): string =>
  cacheHit === undefined ? "" : cacheHit ? ", cache hit" : ", cache miss"

// Line breaks and other control characters, C1 and Unicode's line separators included.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g
const ESCAPED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * `text` on one line: control characters written as escapes. An error message may carry what a
 * client sent (a database quoting a value); with its line breaks it could print a log line of its own.
 */
const oneLine = (text: string): string =>
  text.replace(CONTROL, (character) => ESCAPED[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The text line of a finished request (see `formatQueryEvent`). */
export const textLogLine = (request: LoggedRequest, status: number, durationMs: number, cacheHit: boolean | undefined, error: string | undefined): string => {
  const line = `${request.method} ${oneLine(request.path)} → ${status} (${Math.round(durationMs)}ms${cacheNote(cacheHit)})` +
    (request.transport === "mcp" ? " [mcp]" : "")
  return error === undefined ? `✓ ${line}` : `✗ ${line} - ${oneLine(error)}`
}

/** The outcome an event reports: its status, or 500 for an error event without one (200 for a completed one). */
const outcomeStatus = (event: ServeQueryEvent): number => event.responseStatus ?? (event.status === "error" ? 500 : 200)

/**
 * `✓ GET /api/analytics/revenue → 200 (12ms)`, `(12ms, cache hit)` on cached endpoints, `✗ … - message`,
 * `[mcp]` after a tool call's; null for started events.
 */
export const formatQueryEvent = (event: ServeQueryEvent): string | null =>
  event.status === "started"
    ? null
    : textLogLine(event, outcomeStatus(event), event.durationMs ?? 0, event.cacheHit, event.status === "error" ? errorText(event) : undefined)

/** Characters JSON must escape (lone surrogates included): a string without any is written as is. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

const jsonString = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`)

/** `"GET /path"`: tested in its two parts, so that the joined text is not flattened for the test (about half the cost). */
const jsonMessage = (method: string, path: string): string =>
  NEEDS_ESCAPE.test(method) || NEEDS_ESCAPE.test(path) ? JSON.stringify(`${method} ${path}`) : `"${method} ${path}"`

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
 * The JSON line of a finished request (see `formatQueryEventJSON`), `endTime` its timestamp. Written by
 * hand rather than by JSON.stringify of an object: it runs for every request, and this is several
 * times faster; strings that need escaping still go through JSON.stringify.
 */
export const jsonLogLine = (
  request: LoggedRequest,
  status: number,
  durationMs: number,
  cacheHit: boolean | undefined,
  error: string | undefined,
  endTime: number
): string =>
  `{"level":"${error === undefined ? "info" : "error"}","msg":${jsonMessage(request.method, request.path)},"requestId":${
    jsonString(request.requestId)
  },"endpoint":${jsonString(request.endpointKey)},"status":${jsonNumber(status)},"durationMs":${hundredths(durationMs)}${
    cacheHit === undefined ? "" : `,"cacheHit":${cacheHit}`
  },"timestamp":"${isoTimestamp(endTime)}"${
    // Only tool calls say how they came: an HTTP line stays as it always was.
    request.transport === "mcp" ? `,"transport":"mcp"` : ""
  }${error === undefined ? "" : `,"error":${jsonString(error)}`}}`

/**
 * One JSON object per event (durationMs to 0.01 ms; `cacheHit` on cached endpoints; timestamp = end
 * time, ISO 8601; `transport: "mcp"` after a tool call's); null for started events.
 */
export const formatQueryEventJSON = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const cacheHit = typeof event.cacheHit === "boolean" ? event.cacheHit : undefined
  const error = event.status === "error" ? errorText(event) : undefined
  return jsonLogLine(event, outcomeStatus(event), event.durationMs ?? 0, cacheHit, error, event.endTime ?? event.startTime)
}

export const formatSlowQuery = (request: LoggedRequest, durationMs: number, thresholdMs: number): string =>
  `[slow-query] ${request.method} ${oneLine(request.path)} (${request.endpointKey}) took ${Math.round(durationMs)}ms (threshold: ${thresholdMs}ms)`
