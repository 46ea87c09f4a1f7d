import { joinPath } from "../domain/paths.js"

/** `metrics: { ... }`: where and to whom the Prometheus text is served, and the duration buckets. */
export interface MetricsOptions {
  /** Under `basePath`; default "/metrics". */
  readonly path?: string
  /** true: anyone may scrape. Default false: the global auth strategies run on the route. */
  readonly public?: boolean
  /** The caller needs one of these roles (needs a strategy; not with `public: true`). */
  readonly roles?: ReadonlyArray<string>
  /** Upper bounds in seconds of `queryserve_request_duration_seconds`'s buckets, increasing. */
  readonly buckets?: ReadonlyArray<number>
}

/** `metrics` with its defaults applied and checked. */
export interface MetricsPlan {
  /** The route's full path (`basePath` + `path`). */
  readonly path: string
  readonly public: boolean
  readonly roles: ReadonlyArray<string>
  readonly buckets: ReadonlyArray<number>
}

/** Seconds: sub-millisecond cache hits up to the default 30 s request timeout. */
export const DEFAULT_DURATION_BUCKETS: ReadonlyArray<number> = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Throws for options that contradict each other, at define time rather than at the first scrape. */
export const normalizeMetrics = (basePath: string, metrics: boolean | MetricsOptions | undefined): MetricsPlan | undefined => {
  if (metrics === undefined || metrics === false) return undefined
  const options: MetricsOptions = metrics === true ? {} : metrics
  const roles = options.roles ?? []
  if (options.public === true && roles.length > 0) {
    throw new Error("metrics: `roles` needs an authenticated caller; it cannot be combined with `public: true`")
  }
  const buckets = options.buckets ?? DEFAULT_DURATION_BUCKETS
  if (buckets.length === 0 || buckets.some((bound, i) => !(Number.isFinite(bound) && bound > 0 && (i === 0 || bound > buckets[i - 1]!)))) {
    throw new Error("metrics: `buckets` must be positive, finite and strictly increasing")
  }
  return { path: joinPath(basePath, options.path ?? "/metrics"), public: options.public === true, roles, buckets }
}

