import type { ServeQueryEvent } from "../domain/event.js"
import type { RequestMeter } from "../stages/events.js"

/** One answer of the metrics route. */
export interface MetricsScrape {
  readonly contentType: string
  readonly body: string
}

/** The series of one API: fed with its query events, read by the metrics route. */
export interface MetricsService {
  /** Counts one query event. Subscribed to the API's QueryLogger: it runs per request, synchronously. */
  readonly observe: (event: ServeQueryEvent) => void
  /** The exposition text: this process's series, or in a `workers` cluster the sum over every worker. */
  readonly scrape: () => Promise<MetricsScrape>
}

/** A MetricsService that holds resources until closed, and counts the pipeline's requests through `meter`. */
export interface ClosableMetrics extends MetricsService {
  readonly meter: RequestMeter
  readonly close: () => void
}
