import type { LoggedRequest, ServeQueryEvent } from "../domain/event.js"
import { callObserver } from "../domain/observer.js"

type QueryEventListener = (event: ServeQueryEvent) => void

const RESULT_BLIND = new WeakSet<QueryEventListener>()

/**
 * Marks one of queryserve's own listeners (log lines, metrics) as never reading an event's `result`.
 * While only such listeners are subscribed, events of answers from the result cache carry no
 * `result`: reading it would parse the stored JSON, and keeping it readable costs a property
 * definition per event.
 */
export const resultBlind = <L extends QueryEventListener>(listener: L): L => {
  RESULT_BLIND.add(listener)
  return listener
}

/**
 * What a listener does with the pipeline's own events, as calls with their facts: how metrics count
 * requests and the built-in log formats write their lines without events being built for them.
 * `error` is set for a failed request.
 */
export interface RequestMeter {
  started(): void
  finished(request: LoggedRequest, status: number, durationMs: number, cacheHit: boolean | undefined, error: Error | undefined): void
}

const METERS = new WeakMap<QueryEventListener, RequestMeter>()

/**
 * Marks one of queryserve's own listeners (metrics, the built-in logs) as doing for a pipeline event
 * exactly what `meter` does. While every listener is such a one, the pipeline calls their meters and
 * builds no event: a started and a completed event per request cost about 1 µs. Events emitted by
 * hand still reach the listeners themselves.
 */
export const metered = <L extends QueryEventListener>(listener: L, meter: RequestMeter): L => {
  METERS.set(listener, meter)
  return listener
}

/** One meter calling several, for metrics and a log line together. */
const meterOfAll = (meters: ReadonlyArray<RequestMeter>): RequestMeter =>
  meters.length === 1
    ? meters[0]!
    : {
      started: () => {
        for (const meter of meters) meter.started()
      },
      finished: (request, status, durationMs, cacheHit, error) => {
        for (const meter of meters) meter.finished(request, status, durationMs, cacheHit, error)
      }
    }

/** Fan-out of query lifecycle events; `builder.queryLogger` is this service. */
export interface ServeQueryLogger {
  /** Subscribes; the returned function unsubscribes. */
  on(listener: QueryEventListener): () => void
  readonly listenerCount: number
  /** Subscribed listeners that may read an event's `result` (not marked `resultBlind`); absent means all of them. */
  readonly resultReaderCount?: number
  /** Set while every listener is `metered`: the pipeline then calls this instead of emitting its events. */
  readonly meter?: RequestMeter | undefined
  removeAll(): void
  emit(event: ServeQueryEvent): void
}

class ListenerSet implements ServeQueryLogger {
  // Copy-on-write array: emit iterates without allocating, subscribe/unsubscribe are rare.
  private listeners: ReadonlyArray<QueryEventListener> = []
  resultReaderCount = 0
  meter: RequestMeter | undefined = undefined

  on(listener: QueryEventListener): () => void {
    this.update([...this.listeners, listener])
    return () => this.update(this.listeners.filter((l) => l !== listener))
  }

  get listenerCount(): number {
    return this.listeners.length
  }

  removeAll(): void {
    this.update([])
  }

  private update(listeners: ReadonlyArray<QueryEventListener>): void {
    this.listeners = listeners
    this.resultReaderCount = listeners.filter((listener) => !RESULT_BLIND.has(listener)).length
    const meters = listeners.flatMap((listener) => METERS.get(listener) ?? [])
    this.meter = meters.length > 0 && meters.length === listeners.length ? meterOfAll(meters) : undefined
  }

  emit(event: ServeQueryEvent): void {
    // A broken log sink must never change a response.
    for (const listener of this.listeners) callObserver("[queryserve] query logger listener threw", listener, event)
  }
}

export const makeQueryLogger = (): ServeQueryLogger => new ListenerSet()
