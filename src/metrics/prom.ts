import cluster from "node:cluster"
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client"
import { isQueryserveWorker } from "../domain/queryserveWorker.js"
import type { ServeQueryEvent } from "../domain/event.js"
import type { RequestMeter } from "../stages/events.js"
import { answerWorkers } from "./clusterPrimary.js"
import { askPrimary, shareWithPrimary } from "./clusterWorker.js"
import type { ClosableMetrics } from "./service.js"
import { type DurationCounts, DurationHistogram } from "./histogram.js"

type Labels = Record<string, string>

/**
 * One counter series, counted in a plain number and added to the prom-client Counter when it is
 * collected (a scrape): `Counter.inc(labels)` hashes the labels on every call, this is an addition.
 */
class Tally {
  pending = 0

  constructor(readonly labels: Labels) {}

  /** Moves what was counted since the last scrape into `counter`. */
  flushInto(counter: Counter): void {
    if (this.pending === 0) return
    counter.inc(this.labels, this.pending)
    this.pending = 0
  }
}

/** The series of one endpoint, created on its first event and kept: nothing is allocated per request. */
class EndpointSeries {
  readonly endpoint: Labels
  readonly rateLimited: Tally
  readonly hit: Tally
  readonly miss: Tally
  readonly durations: DurationCounts
  /** method → status → tally */
  private readonly requests = new Map<string, Map<number, Tally>>()

  constructor(private readonly key: string, private readonly requestTallies: Array<Tally>, histogram: DurationHistogram) {
    this.endpoint = { endpoint: key }
    this.durations = histogram.countsFor(key)
    this.rateLimited = new Tally(this.endpoint)
    this.hit = new Tally({ endpoint: key, result: "hit" })
    this.miss = new Tally({ endpoint: key, result: "miss" })
  }

  request(method: string, status: number): Tally {
    let byStatus = this.requests.get(method)
    if (byStatus === undefined) this.requests.set(method, (byStatus = new Map()))
    let tally = byStatus.get(status)
    if (tally === undefined) {
      byStatus.set(status, (tally = new Tally({ endpoint: this.key, method, status: String(status) })))
      this.requestTallies.push(tally)
    }
    return tally
  }
}

let processRegistry: Registry | undefined

/** prom-client's default metrics describe the process: collected once, shared by every API in it. */
const processMetrics = (): Registry => {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/**
 * The queryserve series of one API in a registry of its own, fed from its query events. `api` names
 * it in a `workers` cluster, where a scrape sums this API's registry over the workers, and no other's.
 */
export const makePromMetrics = (buckets: ReadonlyArray<number>, api: number): ClosableMetrics => {
  const registry = new Registry()
  const registers = [registry]
  const series = new Map<string, EndpointSeries>()
  const requestTallies: Array<Tally> = []
  new Counter({
    name: "queryserve_requests_total",
    help: "Answered requests per endpoint, method and status, errors included.",
    labelNames: ["endpoint", "method", "status"],
    registers,
    collect() {
      for (const tally of requestTallies) tally.flushInto(this)
    }
  })
  const duration = new DurationHistogram(
    "queryserve_request_duration_seconds",
    "Time from routing to the answer, per endpoint.",
    buckets,
    registers,
    () => Array.from(series.values(), (endpoint) => endpoint.durations)
  )
  new Counter({
    name: "queryserve_result_cache_total",
    help: "Lookups in the result cache per endpoint: result hit or miss.",
    labelNames: ["endpoint", "result"],
    registers,
    collect() {
      for (const endpoint of series.values()) {
        endpoint.hit.flushInto(this)
        endpoint.miss.flushInto(this)
      }
    }
  })
  new Counter({
    name: "queryserve_rate_limited_total",
    help: "Requests answered 429 per endpoint.",
    labelNames: ["endpoint"],
    registers,
    collect() {
      for (const endpoint of series.values()) endpoint.rateLimited.flushInto(this)
    }
  })
  // Read at scrape time too: cheaper per request than Gauge.inc/dec.
  let inFlight = 0
  new Gauge({
    name: "queryserve_in_flight_requests",
    help: "Endpoint requests started and not yet answered.",
    registers,
    collect() {
      this.set(inFlight)
    }
  })

  const seriesOf = (key: string): EndpointSeries => {
    let found = series.get(key)
    if (found === undefined) series.set(key, (found = new EndpointSeries(key, requestTallies, duration)))
    return found
  }

  const meter: RequestMeter = {
    started: () => {
      inFlight++
    },
    finished: (request, status, durationMs, cacheHit) => {
      // An event emitted by hand without its start must not drive the gauge below zero.
      if (inFlight > 0) inFlight--
      const endpoint = seriesOf(request.endpointKey)
      endpoint.request(request.method, status).pending++
      endpoint.durations.observe(durationMs / 1000)
      if (status === 429) endpoint.rateLimited.pending++
      if (cacheHit !== undefined) (cacheHit ? endpoint.hit : endpoint.miss).pending++
    }
  }
  const observe = (event: ServeQueryEvent): void => {
    if (event.status === "started") return meter.started()
    const status = event.responseStatus ?? (event.status === "error" ? 500 : 200)
    meter.finished(event, status, event.durationMs ?? 0, event.cacheHit, event.error)
  }

  // The primary of `start({ workers })` runs the same program: it answers the workers' scrapes.
  if (cluster.isPrimary) answerWorkers()
  if (isQueryserveWorker()) {
    const unshare = shareWithPrimary(processMetrics(), api, registry)
    return { observe, meter, scrape: () => askPrimary(api), close: unshare }
  }
  const scraped = Registry.merge([processMetrics(), registry])
  return {
    observe,
    meter,
    scrape: async () => ({ contentType: scraped.contentType, body: await scraped.metrics() }),
    close: () => {}
  }
}
