import type { QueryLoggingOption } from "../domain/config.js"
import { formatQueryEvent, formatQueryEventJSON, formatSlowQuery } from "../domain/event.js"
import { resultBlind, type ServeQueryLogger } from "../services/QueryLogger.js"

/** Registers the listeners `queryLogging` and `slowQueryThreshold` ask for; none when both are absent. */
export const attachConfiguredLogging = (
  logger: ServeQueryLogger,
  queryLogging: QueryLoggingOption | undefined,
  slowQueryThreshold: number | undefined
): void => {
  if (queryLogging === true || queryLogging === "json") {
    const format = queryLogging === true ? formatQueryEvent : formatQueryEventJSON
    logger.on(resultBlind((event) => {
      const line = format(event)
      if (line !== null) console.log(line)
    }))
  } else if (typeof queryLogging === "function") {
    logger.on(queryLogging)
  }
  if (slowQueryThreshold !== undefined) {
    logger.on(resultBlind((event) => {
      if (event.status === "completed" && (event.durationMs ?? 0) > slowQueryThreshold) {
        console.warn(formatSlowQuery(event, slowQueryThreshold))
      }
    }))
  }
}
