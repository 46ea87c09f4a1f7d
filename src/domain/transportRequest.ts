import type * as Tracer from "effect/Tracer"
import { ClientClosed } from "./clientClosed.js"
import { ADAPTER_HEADERS, type HeaderMap, type QueryParams, type ServeRequest } from "./http.js"
import { emptyRecord, parseQueryString } from "./queryString.js"

/**
 * The ServeRequest queryserve's own adapters build. Creating an AbortController per request costs
 * more than the rest of a small request, so the signal exists only once someone reads it (a handler
 * through `ctx.signal`, or an Effect handler being run). Until then an abort is only recorded, and
 * the pipeline learns about an expired deadline through `onExpire`, which creates nothing.
 * Its `headers` have lower-case names (node:http, fetch `Headers` and @effect/platform all give them
 * so), which lets `getHeader` stop at the exact read. Its `query` is parsed from `rawQuery` when
 * first read.
 */
export class TransportRequest implements ServeRequest {
  private controller: AbortController | undefined = undefined
  private combined: AbortSignal | undefined = undefined
  private aborted = false
  private abortReason: unknown = undefined
  private expired = false
  private expiry: unknown = undefined
  private expireListener: ((error: unknown) => void) | undefined = undefined
  private dependents: Array<TransportRequest> | undefined = undefined
  private parsedQuery: QueryParams | undefined = undefined

  constructor(
    readonly method: string,
    readonly path: string,
    /** The request target's text after `?`, as sent ("" without one). */
    readonly rawQuery: string,
    readonly headers: HeaderMap,
    readonly body: unknown,
    readonly remoteAddress: string | undefined,
    readonly raw: unknown,
    /** The transport's own signal (a fetch Request's); `signal` follows it too. */
    private readonly upstream: AbortSignal | undefined = undefined,
    /** The span the transport serves this request in (an Effect HTTP server's), parent of the stage spans. */
    readonly traceParent: Tracer.AnySpan | undefined = undefined
  ) {}

  get query(): QueryParams {
    return (this.parsedQuery ??= this.rawQuery === "" ? emptyRecord() : parseQueryString(this.rawQuery))
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.aborted) this.controller.abort(this.abortReason)
    }
    if (this.upstream === undefined) return this.controller.signal
    return (this.combined ??= AbortSignal.any([this.upstream, this.controller.signal]))
  }

  /** Aborts `signal` (now, or when it is first read): the client went away. */
  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.abortReason = reason
    this.controller?.abort(reason)
  }

  /**
   * Set when the client left before the request was answered: the adapter aborted it as `ClientClosed`,
   * or the transport's own signal aborted (a fetch runtime's, when the client goes away). Read from
   * fields, so that it creates no signal; an abort for the deadline came first when it is unset.
   */
  get clientClosure(): ClientClosed | undefined {
    if (this.aborted) return this.abortReason instanceof ClientClosed ? this.abortReason : undefined
    return this.upstream?.aborted === true ? new ClientClosed() : undefined
  }

  /** The deadline passed: aborts `signal` with `error` and tells the pipeline, which answers with it. */
  expire(error: unknown): void {
    if (this.expired) return
    this.expired = true
    this.expiry = error
    this.abort(error)
    const listener = this.expireListener
    this.expireListener = undefined
    listener?.(error)
    if (this.dependents !== undefined) for (const dependent of this.dependents) dependent.expire(error)
  }

  /**
   * A request made on behalf of this one (each tool call of an MCP request) expires with it: its
   * pipeline then answers with the timeout error, as a request of its own would.
   */
  carry(dependent: TransportRequest): void {
    if (this.expired) dependent.expire(this.expiry)
    else (this.dependents ??= []).push(dependent)
  }

  /** One listener (the pipeline's) for `expire`; called at once when the deadline already passed. Returns the unsubscribe. */
  onExpire(listener: (error: unknown) => void): () => void {
    if (this.expired) {
      listener(this.expiry)
      return noop
    }
    this.expireListener = listener
    return () => {
      if (this.expireListener === listener) this.expireListener = undefined
    }
  }
}

const noop = (): void => {}

// Its header names are lower-case (see getHeader): a flag on the prototype costs no instance a field.
Object.defineProperty(TransportRequest.prototype, ADAPTER_HEADERS, { value: true })
