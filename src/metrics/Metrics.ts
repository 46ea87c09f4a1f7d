import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DEFAULT_DURATION_BUCKETS } from "./options.js"
import type { MetricsService } from "./service.js"
import { makeDeferredMetrics } from "./deferred.js"
import { loadPrometheus } from "./load.js"
import { makeRecordingMetrics, type RecordingMetrics } from "./recording.js"

/** What the prom-client layer measures; the route's path and auth are the pipeline's business. */
export interface MetricsLayerOptions {
  /** Upper bounds in seconds of the request-duration histogram's buckets. */
  readonly buckets?: ReadonlyArray<number>
}

/**
 * Metrics layers built in this process so far. The workers of `start({ workers })` run the same
 * program, so the n-th one is the same API in each: its number names the API to the primary.
 */
let layersBuilt = 0

export class Metrics extends Context.Tag("queryserve/Metrics")<Metrics, MetricsService>() {
  /**
   * A prom-client registry for one API, plus the process's default metrics. prom-client is imported
   * when the layer is built, not before: events that arrive meanwhile are counted once it is loaded.
   * Releasing the layer (`api.dispose()`) withdraws the registry from cluster aggregation.
   */
  static layer(options: MetricsLayerOptions = {}): Layer.Layer<Metrics> {
    const buckets = options.buckets ?? DEFAULT_DURATION_BUCKETS
    return Layer.scoped(
      Metrics,
      Effect.acquireRelease(
        Effect.sync(() => {
          const load = loadPrometheus()
          // Numbered when the layer is built (in `defineServe`), in the program's order, not when prom-client has loaded.
          const api = layersBuilt++
          return makeDeferredMetrics(() => load().then((prometheus) => prometheus.makePromMetrics(buckets, api)))
        }),
        (metrics) => Effect.sync(metrics.close)
      )
    )
  }

  /** A test double that keeps the events it observed, for asserting what an API reports without prom-client. */
  static recording(): { readonly layer: Layer.Layer<Metrics>; readonly metrics: RecordingMetrics } {
    const metrics = makeRecordingMetrics()
    return { layer: Layer.succeed(Metrics, metrics), metrics }
  }
}
