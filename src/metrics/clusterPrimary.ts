/** The primary's side of the cluster scrape (see cluster.ts): it collects one API from every worker and sums it. */
import cluster, { type Worker } from "node:cluster"
import { AggregatorRegistry } from "prom-client"
import {
  COLLECT_REQUEST,
  COLLECT_RESPONSE,
  type CollectRequest,
  type CollectResponse,
  errorText,
  isMessage,
  type RegistryJson,
  SCRAPE_REQUEST,
  SCRAPE_RESPONSE,
  type ScrapeRequest,
  type ScrapeResponse,
  WORKER_TIMEOUT_MS
} from "./cluster.js"

/** One collection in progress: the workers asked that have not answered yet. */
interface Collection {
  readonly pending: ReadonlySet<Worker>
  readonly answer: (worker: Worker, response: CollectResponse) => void
  readonly fail: (reason: string) => void
}

const collections = new Map<number, Collection>()
let nextId = 0

const pids = (workers: Iterable<Worker>): string => Array.from(workers, (worker) => worker.process.pid).join(", ")

/** API number `api`'s registries and the process registry of every worker, or the reason a worker gave none. */
const collect = (api: number): Promise<Array<RegistryJson>> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    // Every worker, one still starting too (as prom-client asks them): it has no series yet, but one that
    // never answers must fail the scrape rather than be left out of the sum unnoticed.
    const pending = new Set(Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker?.isConnected() === true))
    const registries: Array<RegistryJson> = []
    const timer = setTimeout(() => fail(`worker ${pids(pending)} did not answer within ${WORKER_TIMEOUT_MS} ms`), WORKER_TIMEOUT_MS)
    const settle = (): void => {
      clearTimeout(timer)
      collections.delete(id)
    }
    const fail = (reason: string): void => {
      settle()
      reject(new Error(reason))
    }
    const answer = (worker: Worker, response: CollectResponse): void => {
      if (!pending.delete(worker)) return
      if (response.registries === undefined) return fail(`worker ${worker.process.pid}: ${response.error ?? "no metrics"}`)
      registries.push(...response.registries)
      if (pending.size > 0) return
      settle()
      resolve(registries)
    }
    collections.set(id, { pending, answer, fail })
    const request: CollectRequest = { type: COLLECT_REQUEST, id, api }
    for (const worker of [...pending]) {
      worker.send(request, undefined, (error: Error | null) => {
        if (error !== null) fail(`worker ${worker.process.pid}: ${error.message}`)
      })
    }
  })

const reply = (worker: Worker, response: ScrapeResponse): void => {
  if (worker.isConnected()) worker.send(response)
}

let answering = false

/** Answers the workers' scrape requests with the sum over every worker; idempotent. */
export const answerWorkers = (): void => {
  if (answering) return
  answering = true
  cluster.on("message", (worker, message: unknown) => {
    if (isMessage<CollectResponse>(message, COLLECT_RESPONSE)) return collections.get(message.id)?.answer(worker, message)
    if (!isMessage<ScrapeRequest>(message, SCRAPE_REQUEST)) return
    const { id } = message
    collect(message.api)
      // Summed the way prom-client sums a cluster: each metric by its `aggregator` (counters add up, lag is averaged, …).
      .then((registries) => AggregatorRegistry.aggregate([...registries]).metrics())
      .then(
        (body) => reply(worker, { type: SCRAPE_RESPONSE, id, body }),
        (error: unknown) => reply(worker, { type: SCRAPE_RESPONSE, id, error: errorText(error) })
      )
  })
  // A worker that died (or lost its channel) mid-collection fails it now, not at the deadline.
  cluster.on("disconnect", (worker) => {
    for (const collection of collections.values()) {
      if (collection.pending.has(worker)) collection.fail(`worker ${worker.process.pid} exited before it answered`)
    }
  })
}
