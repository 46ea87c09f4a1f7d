import { ServiceUnavailable } from "../domain/errors.js"
import type { ServeQueryEvent } from "../domain/event.js"
import { metered, type RequestMeter, resultBlind } from "../stages/events.js"
import type { ClosableMetrics, MetricsScrape } from "./service.js"


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
  /** What arrived before the backend: replayed into it. */
  let early: Array<(loaded: ClosableMetrics) => void> | undefined = []
  let closed = false
  const ready: Promise<ClosableMetrics> = load().then(
    (loaded) => {
      if (closed) loaded.close()
      else backend = loaded
      for (const replay of early ?? []) replay(loaded)
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
  const meter: RequestMeter = {
    started: () => {
      if (backend !== undefined) backend.meter.started()
      else early?.push((loaded) => loaded.meter.started())
    },
    finished: (request, status, durationMs, cacheHit, error) => {
      if (backend !== undefined) backend.meter.finished(request, status, durationMs, cacheHit, error)
      else early?.push((loaded) => loaded.meter.finished(request, status, durationMs, cacheHit, error))
    }
  }
  return {
    // The Prometheus backend counts events; it never reads their `result`.
    observe: metered(
      resultBlind((event: ServeQueryEvent) => {
        if (backend !== undefined) backend.observe(event)
        else early?.push((loaded) => loaded.observe(event))
      }),
      meter
    ),
    meter,
    scrape: (): Promise<MetricsScrape> => ready.then((loaded) => loaded.scrape()),
    close: () => {
      closed = true
      early = undefined
      backend?.close()
      backend = undefined
    }
  }
}
