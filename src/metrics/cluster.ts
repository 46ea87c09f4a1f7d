/**
 * The messages of one scrape in a `workers` cluster. The worker that received the scrape asks the
 * primary for one API's series (`ScrapeRequest`); the primary asks every worker for that API's
 * registry and the process's (`CollectRequest`), sums what they send back (`CollectResponse`) with
 * prom-client's aggregation and answers with the text (`ScrapeResponse`).
 *
 * An API is named by its number among the metrics-on APIs of its process: the workers run the same
 * program, so the n-th is the same API in each. Collecting per API keeps one API's scrape from
 * showing the series of another, whose route may be guarded where this one is public.
 */
import type { MetricObjectWithValues, MetricValue } from "prom-client"
import { ServiceUnavailable } from "../domain/errors.js"

export const SCRAPE_REQUEST = "queryserve:metrics-request"
export const SCRAPE_RESPONSE = "queryserve:metrics-response"
export const COLLECT_REQUEST = "queryserve:metrics-collect"
export const COLLECT_RESPONSE = "queryserve:metrics-collected"

/** How long the primary waits for each worker's registries (prom-client's own cluster timeout). */
export const WORKER_TIMEOUT_MS = 5_000
/** How long the scraped worker waits for the primary: the workers' time plus the two extra hops. */
export const PRIMARY_TIMEOUT_MS = 6_000

/** One registry's metrics as `Registry.getMetricsAsJSON()` gives them, the input of `AggregatorRegistry.aggregate`. */
export type RegistryJson = ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>

/** Scraped worker → primary. `id` is the worker's own. */
export interface ScrapeRequest {
  readonly type: typeof SCRAPE_REQUEST
  readonly id: number
  readonly api: number
}

/** Primary → scraped worker: the text, or why there is none. */
export interface ScrapeResponse {
  readonly type: typeof SCRAPE_RESPONSE
  readonly id: number
  readonly body?: string
  readonly error?: string
}

/** Primary → every worker. `id` is the primary's. */
export interface CollectRequest {
  readonly type: typeof COLLECT_REQUEST
  readonly id: number
  readonly api: number
}

/** Worker → primary: the process registry, then the API's when the worker has it. */
export interface CollectResponse {
  readonly type: typeof COLLECT_RESPONSE
  readonly id: number
  readonly registries?: ReadonlyArray<RegistryJson>
  readonly error?: string
}

export const isMessage = <M extends { readonly type: string }>(message: unknown, type: M["type"]): message is M =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export const clusterUnavailable = (reason: string): ServiceUnavailable =>
  new ServiceUnavailable({ message: `The metrics of the other workers could not be collected: ${reason}` })
