import { ServiceUnavailable } from "../domain/errors.js"
import type { ServeQueryEvent } from "../domain/event.js"
import { resultBlind } from "../services/QueryLogger.js"
import type { MetricsScrape, MetricsService } from "./Metrics.js"

/** A MetricsService that holds resources until closed. */
export interface ClosableMetrics extends MetricsService {
  readonly close: () => void
}

const unavailable = new ServiceUnavailable({
  message: "Metrics are unavailable: prom-client could not be loaded on this runtime"
})

/**
 * Metrics whose backend is still loading: events observed before it is ready are kept and replayed
 * into it, so the first requests after `defineServe` count too. If it cannot load (a runtime without
 * Node's modules), that is logged once, events are dropped and every scrape answers 503.
 */
export const makeDeferredMetrics = (load: () => Promise<ClosableMetrics>): ClosableMetrics => {
  let backend: ClosableMetrics | undefined
  let early: Array<ServeQueryEvent> | undefined = []
  let closed = false
  const ready: Promise<ClosableMetrics> = load().then(
    (loaded) => {
      if (closed) loaded.close()
      else backend = loaded
      for (const event of early ?? []) loaded.observe(event)
      early = undefined
      return loaded
    },
    (error: unknown) => {
      early = undefined
      console.error("[queryserve] metrics are off: prom-client could not be loaded", error)
      throw unavailable
    }
  )
  // Reported above; each scrape gets the rejection itself.
  ready.catch(() => {})
  return {
    // The Prometheus backend counts events; it never reads their `result`.
    observe: resultBlind((event: ServeQueryEvent) => {
      if (backend !== undefined) backend.observe(event)
      else early?.push(event)
    }),
    scrape: (): Promise<MetricsScrape> => ready.then((loaded) => loaded.scrape()),
    close: () => {
      closed = true
      early = undefined
      backend?.close()
      backend = undefined
    }
  }
}
