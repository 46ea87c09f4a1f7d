import type { ServeQueryEvent } from "../domain/event.js"
import type { MetricsService } from "./service.js"

/** The test double of the Metrics service: what it observed, in order. */
export interface RecordingMetrics extends MetricsService {
  /** Every event observed: started, completed and error. */
  readonly events: ReadonlyArray<ServeQueryEvent>
}

/** Its scrape answers one line per finished request, `<endpoint> <method> <status>`, for asserting the route serves it. */
export const makeRecordingMetrics = (): RecordingMetrics => {
  const events: Array<ServeQueryEvent> = []
  return {
    events,
    observe: (event) => void events.push(event),
    scrape: () =>
      Promise.resolve({
        contentType: "text/plain; charset=utf-8",
        body: events
          .filter((event) => event.status !== "started")
          .map((event) => `${event.endpointKey} ${event.method} ${event.responseStatus ?? ""}\n`)
          .join("")
      })
  }
}
