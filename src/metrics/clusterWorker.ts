/** A worker's side of the cluster scrape (see cluster.ts): it asks the primary, and answers its collections. */
import { Registry } from "prom-client"
import type { MetricsScrape } from "./service.js"
import {
  clusterUnavailable,
  COLLECT_REQUEST,
  COLLECT_RESPONSE,
  type CollectRequest,
  type CollectResponse,
  errorText,
  isMessage,
  PRIMARY_TIMEOUT_MS,
  SCRAPE_REQUEST,
  SCRAPE_RESPONSE,
  type ScrapeRequest,
  type ScrapeResponse
} from "./cluster.js"

/** The registries of this worker's metrics-on APIs, by their number; the primary collects one at a time. */
const shared = new Map<number, Registry>()
let processRegistry: Registry | undefined

const send = (message: CollectResponse | ScrapeRequest, onError: (error: Error) => void): void => {
  if (!process.connected) return onError(new Error("the IPC channel to the primary is closed"))
  process.send!(message, undefined, undefined, (error: Error | null) => {
    if (error !== null) onError(error)
  })
}

/**
 * Every worker answers, with its process registry at least: one whose API was disposed still adds its
 * process metrics, and says nothing of other APIs.
 */
const onCollect = (message: unknown): void => {
  if (!isMessage<CollectRequest>(message, COLLECT_REQUEST)) return
  const apiRegistry = shared.get(message.api)
  const registries = apiRegistry === undefined ? [processRegistry!] : [processRegistry!, apiRegistry]
  const { id } = message
  // The primary fails the scrape when an answer does not arrive; nothing more to do here.
  const ignore = (): void => {}
  Promise.all(registries.map((registry) => registry.getMetricsAsJSON())).then(
    (json) => send({ type: COLLECT_RESPONSE, id, registries: json }, ignore),
    (error: unknown) => send({ type: COLLECT_RESPONSE, id, error: errorText(error) }, ignore)
  )
}

/** Offers API number `api`'s registry to the primary's collections; the returned function withdraws it. */
export const shareWithPrimary = (processMetrics: Registry, api: number, registry: Registry): (() => void) => {
  if (processRegistry === undefined) process.on("message", onCollect)
  processRegistry = processMetrics
  shared.set(api, registry)
  return () => {
    if (shared.get(api) === registry) shared.delete(api)
  }
}

let nextId = 0
const waiting = new Map<number, { readonly resolve: (body: string) => void; readonly reject: (reason: string) => void }>()
let listening = false

const onResponse = (message: unknown): void => {
  if (!isMessage<ScrapeResponse>(message, SCRAPE_RESPONSE)) return
  const request = waiting.get(message.id)
  if (request === undefined) return
  waiting.delete(message.id)
  if (message.body !== undefined) request.resolve(message.body)
  else request.reject(message.error ?? "no answer")
}

/** API number `api`'s series and the process metrics, summed over every worker by the primary. */
export const askPrimary = (api: number): Promise<MetricsScrape> => {
  if (!listening) {
    listening = true
    process.on("message", onResponse)
  }
  const id = nextId++
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id)
      reject(clusterUnavailable(`the primary did not answer within ${PRIMARY_TIMEOUT_MS} ms`))
    }, PRIMARY_TIMEOUT_MS)
    waiting.set(id, {
      resolve: (body) => {
        clearTimeout(timer)
        resolve(body)
      },
      reject: (reason) => {
        clearTimeout(timer)
        reject(clusterUnavailable(reason))
      }
    })
    // The primary gone (its IPC channel closed): answer now rather than at the deadline.
    send({ type: SCRAPE_REQUEST, id, api }, (error) => {
      waiting.get(id)?.reject(error.message)
      waiting.delete(id)
    })
  }).then((body) => ({ contentType: Registry.PROMETHEUS_CONTENT_TYPE, body }))
}
