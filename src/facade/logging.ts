import type { QueryLoggingOption } from "../domain/config.js"
import { formatQueryEvent, formatQueryEventJSON, formatSlowQuery, jsonLogLine, textLogLine } from "../domain/event.js"
import { metered, type RequestMeter, resultBlind, type ServeQueryLogger } from "../services/QueryLogger.js"

const ignoreStart = (): void => {}

/** Text or JSON lines on console.log: from events emitted by hand, and straight from the pipeline's facts (no event built). */
const lineLogger = (json: boolean) => {
  const format = json ? formatQueryEventJSON : formatQueryEvent
  const meter: RequestMeter = {
    started: ignoreStart,
    finished: (request, status, durationMs, cacheHit, error) => {
      const message = error === undefined ? undefined : error.message
      console.log(
        json
          ? jsonLogLine(request, status, durationMs, cacheHit, message, request.startTime + durationMs)
          : textLogLine(request, status, durationMs, cacheHit, message)
      )
    }
  }
  return metered(resultBlind((event) => {
    const line = format(event)
    if (line !== null) console.log(line)
  }), meter)
}

/** A console.warn for each completed request slower than `thresholdMs`. */
const slowQueryWarner = (thresholdMs: number) => {
  const meter: RequestMeter = {
    started: ignoreStart,
    finished: (request, _status, durationMs, _cacheHit, error) => {
      if (error === undefined && durationMs > thresholdMs) console.warn(formatSlowQuery(request, durationMs, thresholdMs))
    }
  }
  return metered(resultBlind((event) => {
    const durationMs = event.durationMs ?? 0
    if (event.status === "completed" && durationMs > thresholdMs) console.warn(formatSlowQuery(event, durationMs, thresholdMs))
  }), meter)
}

/** Registers the listeners `queryLogging` and `slowQueryThreshold` ask for; none when both are absent. */
export const attachConfiguredLogging = (
  logger: ServeQueryLogger,
  queryLogging: QueryLoggingOption | undefined,
  slowQueryThreshold: number | undefined
): void => {
  if (queryLogging === true || queryLogging === "json") logger.on(lineLogger(queryLogging === "json"))
  else if (typeof queryLogging === "function") logger.on(queryLogging)
  if (slowQueryThreshold !== undefined) logger.on(slowQueryWarner(slowQueryThreshold))
}
