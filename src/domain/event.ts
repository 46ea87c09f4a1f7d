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

const errorMessage = (event: ServeQueryEvent): string => event.error?.message ?? `HTTP ${event.responseStatus ?? 500}`

/** `✓ GET /api/analytics/revenue → 200 (12ms)`, `✗ … - message`; null for started events. */
export const formatQueryEvent = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  const line = `${event.method} ${event.path} → ${event.responseStatus ?? (event.status === "error" ? 500 : 200)} (${Math.round(event.durationMs ?? 0)}ms)`
  return event.status === "completed" ? `✓ ${line}` : `✗ ${line} - ${errorMessage(event)}`
}

/** One JSON object per event (durationMs to 0.01 ms; timestamp = end time, ISO 8601); null for started events. */
export const formatQueryEventJSON = (event: ServeQueryEvent): string | null => {
  if (event.status === "started") return null
  return JSON.stringify({
    level: event.status === "error" ? "error" : "info",
    msg: `${event.method} ${event.path}`,
    requestId: event.requestId,
    endpoint: event.endpointKey,
    status: event.responseStatus ?? (event.status === "error" ? 500 : 200),
    durationMs: Math.round((event.durationMs ?? 0) * 100) / 100,
    timestamp: new Date(event.endTime ?? event.startTime).toISOString(),
    ...(event.status === "error" ? { error: errorMessage(event) } : {})
  })
}

export const formatSlowQuery = (event: ServeQueryEvent, thresholdMs: number): string =>
  `[slow-query] ${event.method} ${event.path} (${event.endpointKey}) took ${Math.round(event.durationMs ?? 0)}ms (threshold: ${thresholdMs}ms)`
