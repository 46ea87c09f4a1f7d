import type { QueryLoggingOption } from "../config/ServeConfig.js"
import { callObserver } from "../domain/observer.js"
import { formatQueryEvent, formatQueryEventJSON, formatSlowQuery, jsonLogLine, textLogLine } from "../domain/event.js"
import { metered, type RequestMeter, resultBlind, type ServeQueryLogger } from "../stages/events.js"

const ignoreStart = (): void => {}

// Captured at import: fake timers a test installs later must not hold the lines back. On a runtime
// without it each line is written at once.
const scheduleTurnEnd: ((callback: () => void) => unknown) | undefined = globalThis.setImmediate
const nodeProcess: { once?: (event: "exit", listener: () => void) => unknown } | undefined = globalThis.process

/** A bound on the lines held back, for in-process calls that never let the event loop turn. */
const MAX_PENDING_LINES = 256

let pendingLines: Array<string> = []
let flushScheduled = false
let flushOnExit = false

const logText = (text: string): void => console.log(text)

const flushLines = (): void => {
  flushScheduled = false
  if (pendingLines.length === 0) return
  const lines = pendingLines
  pendingLines = []
  // Run from the event loop, where a console.log replaced by one that throws would end the process.
  callObserver("[queryserve] writing query log lines failed", logText, lines.join("\n"))
}

/**
 * Writes a log line with the others of this event-loop turn, in one console.log at the turn's end.
 * console.log costs Node 3–6 µs a call (its formatting and stream machinery, more than a whole GET
 * pipeline); a turn's lines written together cost about 0.5 µs each. The process's exit writes what
 * is still held.
 */
const writeLine = (line: string): void => {
  if (scheduleTurnEnd === undefined) return console.log(line)
  pendingLines.push(line)
  if (pendingLines.length >= MAX_PENDING_LINES) return flushLines()
  if (flushScheduled) return
  flushScheduled = true
  scheduleTurnEnd(flushLines)
  if (!flushOnExit) {
    flushOnExit = true
    nodeProcess?.once?.("exit", flushLines)
  }
}

/** Text or JSON lines on console.log, a turn's together: from events emitted by hand, and straight from the pipeline's facts (no event built). */
const lineLogger = (json: boolean) => {
  const format = json ? formatQueryEventJSON : formatQueryEvent
  const meter: RequestMeter = {
    started: ignoreStart,
    finished: (request, status, durationMs, cacheHit, error) => {
      const message = error === undefined ? undefined : error.message
      writeLine(
        json
          ? jsonLogLine(request, status, durationMs, cacheHit, message, request.startTime + durationMs)
          : textLogLine(request, status, durationMs, cacheHit, message)
      )
    }
  }
  return metered(resultBlind((event) => {
    const line = format(event)
    if (line !== null) writeLine(line)
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
