import { StoredResult } from "./storedResult.js"
import { CLIENT_CLOSED_STATUS, ClientClosed } from "../domain/clientClosed.js"
import { toErrorResponse } from "../domain/envelope.js"
import { type ServeError, toServeError } from "../domain/errors.js"
import type { QueryTransport, ServeQueryEvent } from "../domain/event.js"
import type { ServeRequest } from "../domain/http.js"
import { callObserver } from "../domain/observer.js"
import { TransportRequest } from "../domain/transportRequest.js"
import type { ServeQueryLogger } from "./events.js"
import { RowStream } from "./rowStream.js"

/** The facts of one endpoint execution that events and hooks report. */
export interface ExecutionRecord {
  readonly requestId: string
  readonly endpointKey: string
  readonly method: string
  readonly path: string
  readonly request: ServeRequest
  readonly startTime: number
  readonly startedAt: number
  readonly transport: QueryTransport | undefined
}

/** The thrown value behind a classified error, for onError and log events. */
const rawCause = (error: ServeError): unknown =>
  error._tag === "InternalError" || error._tag === "DatabaseUnreachable" ? error.cause ?? error : error

const asError = (value: unknown): Error => (value instanceof Error ? value : new Error(String(value)))

/** Where an event or hook argument keeps the StoredResult it parses `result` from; not enumerable, so copies and logs see `result` only. */
const STORED = Symbol("queryserve/storedResult")

/**
 * One getter for every answer from the result cache, so that their objects share a shape: a getter
 * made per object (a closure) or defined over an existing `result` turned each one into a slow
 * dictionary object, about 2 µs per request.
 */
const PARSED_RESULT: PropertyDescriptor = {
  get(this: { readonly [STORED]: StoredResult }) {
    return this[STORED].parse()
  },
  enumerable: true
}

/** `target` with `result` set: a stored result is parsed when read, each read a fresh value. */
const withResult = <A extends object>(target: A, result: unknown): A & { readonly result: unknown } => {
  const completed = target as A & { result?: unknown }
  if (result instanceof StoredResult) {
    Object.defineProperty(completed, STORED, { value: result })
    Object.defineProperty(completed, "result", PARSED_RESULT)
  } else {
    completed.result = result
  }
  return completed as A & { readonly result: unknown }
}

/**
 * Set when `request` ended because its client closed the connection: nothing failed on our side, and
 * nothing was sent. A TransportRequest answers from its fields, without creating its signal.
 */
const clientClosure = (request: ServeRequest): ClientClosed | undefined => {
  if (request instanceof TransportRequest) return request.clientClosure
  const reason: unknown = request.signal?.aborted === true ? request.signal.reason : undefined
  return reason instanceof ClientClosed ? reason : undefined
}

/** The rows of an answer: an array's, or a page's `data`; undefined for anything else (a stored result is not parsed for it). */
const rowCount = (result: unknown): number | undefined => {
  if (Array.isArray(result)) return result.length
  const data = typeof result === "object" && result !== null && "page" in result ? (result as { readonly data?: unknown }).data : undefined
  return Array.isArray(data) ? data.length : undefined
}

/** A hook that fails (throws, or rejects) is reported and never changes the response. */
const callHook = <A>(name: string, hook: ((arg: A) => void) | undefined, arg: A): void => {
  if (hook !== undefined) callObserver(`[queryserve] ${name} hook threw`, hook, arg)
}

/**
 * Emits started/completed/error events and calls the lifecycle hooks. When nothing listens
 * (`observed()` false) the pipeline skips it entirely: no clock reads, no event objects.
 */
export class Lifecycle {
  private readonly hasHooks: boolean

  constructor(private readonly logger: ServeQueryLogger, private readonly hooks: ServeLifecycleHooks) {
    this.hasHooks = Object.values(hooks).some((hook) => hook !== undefined)
  }

  observed(): boolean {
    return this.hasHooks || this.logger.listenerCount > 0
  }

  started(record: ExecutionRecord): void {
    // Checked here, so that no argument is built for an absent hook on every request.
    if (this.hooks.onRequestStart !== undefined) {
      callHook("onRequestStart", this.hooks.onRequestStart, {
        requestId: record.requestId,
        queryKey: record.endpointKey,
        method: record.method,
        path: record.path,
        request: record.request
      })
    }
    const meter = this.logger.meter
    if (meter !== undefined) meter.started()
    else if (this.logger.listenerCount > 0) {
      this.logger.emit({
        requestId: record.requestId,
        endpointKey: record.endpointKey,
        path: record.path,
        method: record.method,
        status: "started",
        startTime: record.startTime,
        transport: record.transport
      })
    }
  }

  /**
   * `cacheStatus` is set on endpoints the result cache serves: the event then carries `cacheHit`. A
   * streamed answer is reported when its last row was sent, or as failed when it was cut.
   */
  completed(record: ExecutionRecord, input: unknown, status: number, result: unknown, cacheStatus: "HIT" | "MISS" | undefined): void {
    if (result instanceof RowStream) {
      return result.onEnd(({ rows, error }) => {
        if (error === undefined) return this.answered(record, input, status, undefined, cacheStatus, rows)
        const failure = toServeError(error)
        this.failed(record, input, toErrorResponse(failure).status, failure)
      })
    }
    this.answered(record, input, status, result, cacheStatus, rowCount(result))
  }

  private answered(
    record: ExecutionRecord,
    input: unknown,
    status: number,
    result: unknown,
    cacheStatus: "HIT" | "MISS" | undefined,
    rows: number | undefined
  ): void {
    const durationMs = performance.now() - record.startedAt
    const closure = clientClosure(record.request)
    if (closure !== undefined) return this.ended(record, input, durationMs, CLIENT_CLOSED_STATUS, closure)
    if (this.hooks.onRequestEnd !== undefined) {
      const end = { requestId: record.requestId, queryKey: record.endpointKey, durationMs, status }
      callHook("onRequestEnd", this.hooks.onRequestEnd, withResult(end, result))
    }
    const cacheHit = cacheStatus === undefined ? undefined : cacheStatus === "HIT"
    const meter = this.logger.meter
    if (meter !== undefined) meter.finished(record, status, durationMs, cacheHit, undefined)
    else if (this.logger.listenerCount > 0) {
      // When every listener is one of queryserve's own, none reads `result`: a stored one is left out (no getter to define).
      const readable = result instanceof StoredResult && (this.logger.resultReaderCount ?? 1) === 0 ? undefined : result
      this.logger.emit(this.finalEvent(record, "completed", durationMs, input, status, readable, undefined, cacheHit, rows))
    }
  }

  /** A 401 goes to `onAuthFailure`, a 403 to `onAuthorizationFailure`; other errors call neither. */
  refused(queryKey: string, requestId: string, request: ServeRequest, error: ServeError): void {
    if (error._tag === "Unauthorized") {
      callHook("onAuthFailure", this.hooks.onAuthFailure, { requestId, queryKey, reason: error.reason, request })
    } else if (error._tag === "Forbidden") {
      callHook("onAuthorizationFailure", this.hooks.onAuthorizationFailure, {
        requestId,
        queryKey,
        reason: error.reason,
        required: error.required ?? [],
        request
      })
    }
  }

  failed(record: ExecutionRecord, input: unknown, status: number, error: ServeError): void {
    const durationMs = performance.now() - record.startedAt
    const raw = rawCause(error)
    // Audit hooks hear of a refused credential even when its client left before the answer.
    this.refused(record.endpointKey, record.requestId, record.request, error)
    const closure = clientClosure(record.request)
    if (closure !== undefined) return this.ended(record, input, durationMs, CLIENT_CLOSED_STATUS, closure)
    callHook("onError", this.hooks.onError, { error: raw, queryKey: record.endpointKey, requestId: record.requestId, durationMs })
    this.ended(record, input, durationMs, status, asError(raw))
  }

  /** Reports a request that ended without its answer: onRequestEnd, then the error event (or the meters). */
  private ended(record: ExecutionRecord, input: unknown, durationMs: number, status: number, error: Error): void {
    callHook("onRequestEnd", this.hooks.onRequestEnd, {
      requestId: record.requestId,
      queryKey: record.endpointKey,
      durationMs,
      status,
      result: undefined
    })
    const meter = this.logger.meter
    if (meter !== undefined) meter.finished(record, status, durationMs, undefined, error)
    else if (this.logger.listenerCount > 0) {
      this.logger.emit(this.finalEvent(record, "error", durationMs, input, status, undefined, error, undefined, undefined))
    }
  }

  private finalEvent(
    record: ExecutionRecord,
    status: "completed" | "error",
    durationMs: number,
    input: unknown,
    responseStatus: number,
    result: unknown,
    error: Error | undefined,
    cacheHit: boolean | undefined,
    rows: number | undefined
  ): ServeQueryEvent {
    // Built in three steps so that `result` keeps its place among the keys; the steps' shapes are shared by all events.
    const event: { -readonly [K in keyof ServeQueryEvent]: ServeQueryEvent[K] } = {
      requestId: record.requestId,
      endpointKey: record.endpointKey,
      path: record.path,
      method: record.method,
      status,
      startTime: record.startTime,
      endTime: record.startTime + durationMs,
      durationMs,
      input,
      responseStatus,
      transport: record.transport
    }
    withResult(event, result)
    event.error = error
    event.cacheHit = cacheHit
    event.rows = rows
    return event
  }
}

export interface ServeLifecycleHooks {
  readonly onRequestStart?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly method: string
    readonly path: string
    readonly request: ServeRequest
  }) => void
  readonly onRequestEnd?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly durationMs: number
    /** The status sent; 499 when the client closed the connection first (nothing was sent). */
    readonly status: number
    readonly result: unknown
  }) => void
  readonly onError?: (event: {
    readonly error: unknown
    readonly queryKey: string
    readonly requestId: string
    readonly durationMs: number
  }) => void
  /** Authentication failed (401): credentials missing or invalid. */
  readonly onAuthFailure?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly reason: string
    readonly request: ServeRequest
  }) => void
  /** An authenticated caller was refused (403): a missing role, scope or tenant. `required` lists the roles or scopes asked for. */
  readonly onAuthorizationFailure?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly reason: string
    readonly required: ReadonlyArray<string>
    readonly request: ServeRequest
  }) => void
}
