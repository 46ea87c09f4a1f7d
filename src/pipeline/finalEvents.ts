import { StoredResult } from "../cache/ResultCacheStore.js"
import type { QueryTransport, ServeQueryEvent } from "../domain/event.js"
import type { ExecutionRecord } from "./lifecycle.js"

/**
 * What completed and failed executions report (events and `onRequestEnd` arguments), as classes:
 * an answer from the result cache keeps its StoredResult in a private field, invisible to copies and
 * logs, and its `result` is a getter shared by all of them that parses the stored JSON on each read.
 * One `defineProperty` per hit remains (`result` must be an own enumerable property, for spreads and
 * JSON); a second one for the stored result, and a getter per object, cost twice and ten times that.
 * Fields are assigned in the constructors, in the order their keys are listed.
 */
abstract class ReportsResult {
  #stored: StoredResult | undefined = undefined

  private static readonly PARSED: PropertyDescriptor = {
    get(this: ReportsResult) {
      return this.#stored?.parse()
    },
    enumerable: true
  }

  protected setResult(result: unknown): void {
    if (result instanceof StoredResult) {
      this.#stored = result
      Object.defineProperty(this, "result", ReportsResult.PARSED)
    } else {
      ;(this as { result?: unknown }).result = result
    }
  }
}

/** The argument of `onRequestEnd`. */
export class RequestEnd extends ReportsResult {
  declare readonly result: unknown

  constructor(readonly requestId: string, readonly queryKey: string, readonly durationMs: number, readonly status: number, result: unknown) {
    super()
    this.setResult(result)
  }
}

/** A completed or error event. */
export class FinalEvent extends ReportsResult implements ServeQueryEvent {
  declare readonly requestId: string
  declare readonly endpointKey: string
  declare readonly path: string
  declare readonly method: string
  declare readonly status: "completed" | "error"
  declare readonly startTime: number
  declare readonly endTime: number
  declare readonly durationMs: number
  declare readonly input: unknown
  declare readonly responseStatus: number
  declare readonly transport: QueryTransport | undefined
  declare readonly result: unknown
  declare readonly error: Error | undefined
  declare readonly cacheHit: boolean | undefined

  constructor(
    record: ExecutionRecord,
    status: "completed" | "error",
    durationMs: number,
    input: unknown,
    responseStatus: number,
    result: unknown,
    error: Error | undefined,
    cacheHit: boolean | undefined
  ) {
    super()
    const self = this as { -readonly [K in keyof FinalEvent]: FinalEvent[K] }
    self.requestId = record.requestId
    self.endpointKey = record.endpoint.key
    self.path = record.path
    self.method = record.method
    self.status = status
    self.startTime = record.startTime
    self.endTime = record.startTime + durationMs
    self.durationMs = durationMs
    self.input = input
    self.responseStatus = responseStatus
    self.transport = record.transport
    this.setResult(result)
    self.error = error
    self.cacheHit = cacheHit
  }
}
