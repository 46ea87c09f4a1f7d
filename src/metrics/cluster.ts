/**
 * One scrape for a `workers` cluster. The worker that received the scrape asks the primary over IPC;
 * the primary collects every worker's registries with prom-client's AggregatorRegistry (which asks
 * each worker in turn, the asking one included), sums them and sends the text back.
 */
import cluster, { type Worker } from "node:cluster"
import { AggregatorRegistry, type PrometheusContentType, Registry } from "prom-client"
import { ServiceUnavailable } from "../domain/errors.js"
import type { MetricsScrape } from "./Metrics.js"

const REQUEST = "queryserve:metrics-request"
const RESPONSE = "queryserve:metrics-response"

/** prom-client gives each worker 5 s to answer the primary; this covers that and the two extra hops. */
const PRIMARY_TIMEOUT_MS = 6_000

interface MetricsRequest {
  readonly type: typeof REQUEST
  readonly id: number
}

interface MetricsResponse {
  readonly type: typeof RESPONSE
  readonly id: number
  readonly body?: string
  readonly error?: string
}

const isMessage = <M extends { readonly type: string }>(message: unknown, type: M["type"]): message is M =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

// Constructing an AggregatorRegistry installs prom-client's IPC listeners (in the primary and in workers).
let aggregator: AggregatorRegistry<PrometheusContentType> | undefined
const aggregatorRegistry = (): AggregatorRegistry<PrometheusContentType> => (aggregator ??= new AggregatorRegistry())

// ---------------------------------------------------------------- in a worker

/** The API registries of this worker that the primary collects, besides the process's own. */
const shared = new Set<Registry>()

/** Offers an API's registry to the primary's collection; the returned function withdraws it. */
export const shareWithPrimary = (processRegistry: Registry, registry: Registry): (() => void) => {
  aggregatorRegistry()
  const update = (): void => AggregatorRegistry.setRegistries([processRegistry, ...shared])
  shared.add(registry)
  update()
  return () => {
    shared.delete(registry)
    update()
  }
}

let nextId = 0
const waiting = new Map<number, { readonly resolve: (body: string) => void; readonly reject: (error: unknown) => void }>()
let listening = false

const onResponse = (message: unknown): void => {
  if (!isMessage<MetricsResponse>(message, RESPONSE)) return
  const request = waiting.get(message.id)
  if (request === undefined) return
  waiting.delete(message.id)
  if (message.body !== undefined) request.resolve(message.body)
  else request.reject(new Error(message.error ?? "no answer"))
}

const clusterUnavailable = (reason: string): ServiceUnavailable =>
  new ServiceUnavailable({ message: `The metrics of the other workers could not be collected: ${reason}` })

/** The sum over every worker, from the primary. */
export const askPrimary = (): Promise<MetricsScrape> => {
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
      reject: (error) => {
        clearTimeout(timer)
        reject(clusterUnavailable(error instanceof Error ? error.message : String(error)))
      }
    })
    // The primary gone (its IPC channel closed): answer now rather than at the deadline.
    process.send!({ type: REQUEST, id } satisfies MetricsRequest, undefined, undefined, (error: Error | null) => {
      if (error === null) return
      waiting.get(id)?.reject(error)
      waiting.delete(id)
    })
  }).then((body) => ({ contentType: Registry.PROMETHEUS_CONTENT_TYPE, body }))
}

// ---------------------------------------------------------------- in the primary

const reply = (worker: Worker, response: MetricsResponse): void => {
  if (worker.isConnected()) worker.send(response)
}

let answering = false

/** Answers the workers' requests with the aggregate; idempotent. */
export const answerWorkers = (): void => {
  if (answering) return
  answering = true
  cluster.on("message", (worker, message: unknown) => {
    if (!isMessage<MetricsRequest>(message, REQUEST)) return
    aggregatorRegistry().clusterMetrics().then(
      (body: string) => reply(worker, { type: RESPONSE, id: message.id, body }),
      (error: unknown) => reply(worker, { type: RESPONSE, id: message.id, error: error instanceof Error ? error.message : String(error) })
    )
  })
}
