import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { ServeQueryEvent } from "../domain/event.js"

export type QueryEventListener = (event: ServeQueryEvent) => void

/** Fan-out of query lifecycle events; `builder.queryLogger` is this service. */
export interface ServeQueryLogger {
  /** Subscribes; the returned function unsubscribes. */
  on(listener: QueryEventListener): () => void
  readonly listenerCount: number
  removeAll(): void
  emit(event: ServeQueryEvent): void
}

class ListenerSet implements ServeQueryLogger {
  // Copy-on-write array: emit iterates without allocating, subscribe/unsubscribe are rare.
  private listeners: ReadonlyArray<QueryEventListener> = []

  on(listener: QueryEventListener): () => void {
    this.listeners = [...this.listeners, listener]
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener)
    }
  }

  get listenerCount(): number {
    return this.listeners.length
  }

  removeAll(): void {
    this.listeners = []
  }

  emit(event: ServeQueryEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        // A broken log sink must never change a response.
        console.error("[queryserve] query logger listener threw", error)
      }
    }
  }
}

export const makeQueryLogger = (): ServeQueryLogger => new ListenerSet()

export class QueryLogger extends Context.Tag("queryserve/QueryLogger")<QueryLogger, ServeQueryLogger>() {
  /** A fresh logger with no listeners. */
  static readonly layer: Layer.Layer<QueryLogger> = Layer.sync(QueryLogger, makeQueryLogger)
}
