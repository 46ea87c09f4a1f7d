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

/** `✓ GET /api/analytics/revenue → 200 (12ms)`, `✗ … - message`; null for started events. */
export const formatQueryEvent = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const line = `${event.method} ${event.path} → ${event.responseStatus ?? (event.status === "error" ? 500 : 200)} (${Math.round(event.durationMs ?? 0)}ms)`
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
 * One JSON object per event (durationMs to 0.01 ms; timestamp = end time, ISO 8601); null for started
 * events. Written by hand rather than by JSON.stringify of an object: it runs for every request, and
 * this is about twice as fast; strings that need escaping still go through JSON.stringify.
 */
export const formatQueryEventJSON = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const failed = event.status === "error"
  return `{"level":"${failed ? "error" : "info"}","msg":${jsonString(`${event.method} ${event.path}`)},"requestId":${
    jsonString(event.requestId)
  },"endpoint":${jsonString(event.endpointKey)},"status":${jsonNumber(event.responseStatus ?? (failed ? 500 : 200))},"durationMs":${
    hundredths(event.durationMs ?? 0)
  },"timestamp":"${isoTimestamp(event.endTime ?? event.startTime)}"${failed ? `,"error":${jsonString(errorMessage(event))}` : ""}}`
}

export const formatSlowQuery = (event: ServeQueryEvent, thresholdMs: number): string =>
  `[slow-query] ${event.method} ${event.path} (${event.endpointKey}) took ${Math.round(event.durationMs ?? 0)}ms (threshold: ${thresholdMs}ms)`
