import { toErrorResponse } from "../domain/envelope.js"
import { InternalError, PayloadTooLarge, type ServeError } from "../domain/errors.js"
import { type CorsHeaders, getHeader, type HeaderMap, type ServeResponse } from "../domain/http.js"
import { resolveRequestId } from "../stages/requestId.js"
import { finishHeaders } from "../stages/respond.js"

/** What every adapter shares: limits, the client address behind a proxy, and its own error answers. */
export interface TransportOptions {
  /** Largest accepted request body in bytes (default 1 MiB); larger ones get 413 without being buffered. */
  readonly bodyLimit?: number
  /** Milliseconds a handler may take before the answer is 504 and `ctx.signal` aborts (default 30 s; 0 = none). */
  readonly requestTimeout?: number
  /** Take the client address from the first `x-forwarded-for` hop (default false). */
  readonly trustProxy?: boolean | number
}

const DEFAULT_BODY_LIMIT = 1024 * 1024

/** The longest delay a timer takes: Node runs a timer of more (or of NaN or Infinity) after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647

/**
 * Throws, saying what to change, for a duration option that is not 0 to MAX_TIMER_MS milliseconds.
 * A value read from an unset environment variable (`Number(undefined)`, NaN) would otherwise turn a
 * protection off, or make its timer fire at once.
 */
export const checkMilliseconds = (name: string, value: number | undefined, meaning: string): void => {
  if (value === undefined || (typeof value === "number" && value >= 0 && value <= MAX_TIMER_MS)) return
  throw new TypeError(`${name} must be a number of milliseconds from 0 to ${MAX_TIMER_MS} (${meaning}), not ${String(value)}`)
}

/**
 * The body limit of an adapter, after checking the options every adapter shares: NaN as a limit
 * would let every body through (no size compares greater than NaN).
 */
export const checkedBodyLimit = (options: TransportOptions): number => {
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  if (!(typeof limit === "number" && limit >= 0)) {
    throw new TypeError(`bodyLimit must be a number of bytes, 0 or more (default ${DEFAULT_BODY_LIMIT}; Infinity for none), not ${String(limit)}`)
  }
  checkMilliseconds("requestTimeout", options.requestTimeout, "0 for none; default 30000")
  return limit
}

/**
 * A fault the adapter answers with a 500 itself (a fetch Request whose body was read before, a
 * handler that threw instead of answering): logged, as the pipeline logs its own, since no query
 * event or `onError` will tell of it.
 */
export const adapterFault = (cause: unknown): InternalError => {
  console.error("[queryserve] the adapter could not answer the request; answering 500", cause)
  return new InternalError({ cause })
}

export const payloadTooLarge = (limit: number): PayloadTooLarge =>
  new PayloadTooLarge({ message: `The request body exceeds the limit of ${limit} bytes`, limitBytes: limit })

/** Joins body chunks; a single chunk is returned as is. */
export const concatBytes = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/**
 * The answer to a failure an adapter detects outside the pipeline (413, 503 while draining, a handler
 * that threw), with the request id and, when the API has CORS, the same CORS headers the pipeline
 * would give. `headers` is undefined when none could be parsed: the answer for no Origin is used.
 */
export const adapterErrorResponse = (
  error: ServeError,
  headers: HeaderMap | undefined,
  cors: CorsHeaders | undefined
): ServeResponse => {
  const mapped = toErrorResponse(error)
  const request = { headers }
  const answerHeaders = finishHeaders(
    { ...mapped.headers, "content-type": "application/json; charset=utf-8" },
    resolveRequestId({ method: "", path: "", headers }),
    cors?.(getHeader(request, "origin")),
    undefined
  )
  return { status: mapped.status, headers: answerHeaders, body: JSON.stringify(mapped.envelope) }
}
