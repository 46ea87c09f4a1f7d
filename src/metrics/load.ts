import type { ClosableMetrics } from "./service.js"

/** prom-client's metrics for one API: the Node entry's (`./prom.js`, loaded on first use). */
interface MetricsBackend {
  /** `api`: the API's number among the metrics layers of the process, which names it in a `workers` cluster. */
  readonly makePromMetrics: (buckets: ReadonlyArray<number>, api: number) => ClosableMetrics
}

let load: (() => Promise<MetricsBackend>) | undefined

/**
 * Called once by the Node entry with `() => import("./prom.js")`. prom-client and node:cluster are
 * Node modules: the web build never calls it, so nothing it bundles reaches them, not even through a
 * dynamic import, and they are imported only when an API turns `metrics` on.
 */
export const provideMetricsBackend = (loader: () => Promise<MetricsBackend>): void => {
  load = loader
}

/** The one way into prom-client; throws at once where it is not available, so `defineServe` says so. */
export const loadPrometheus = (): (() => Promise<MetricsBackend>) => {
  if (load === undefined) {
    throw new Error(
      "metrics need prom-client and Node's modules, which queryserve's web build (the one for workerd, Deno and browsers) " +
        "leaves out: turn `metrics` off there, or import \"queryserve/node\" where Node's modules exist."
    )
  }
  return load
}
