import { StoredResult } from "./storedResult.js"
import { NotAcceptable } from "../domain/errors.js"
import { type CompressedBodies, getHeader } from "../domain/http.js"
import { isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import { cacheControl, ifNoneMatchHits, strongEtag } from "./httpCache.js"
import type { RequestContext } from "./context.js"
import { CONTENT_TYPES, type OutputFormat, type Representation, rowWriter, toCsv, toNdjson } from "./formats.js"
import type { EndpointPlan } from "./plan.js"
import { RowStream, type StreamedBody } from "./rowStream.js"

/** The response of a successful execution before the request id and CORS headers are added. */
export interface ShapedOutput {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | null
  /** Where the adapters keep the body's compressed forms: set when the body is a cached entry's JSON text. */
  readonly compressed?: CompressedBodies
  /** A streamed answer's rows (`body` is then null). */
  readonly streamed?: StreamedBody
}

const bigintSafe = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()) : value

/**
 * JSON text of a value, or undefined for one JSON has no text for (a function, a symbol, a `toJSON`
 * giving undefined). BigInt (common from SQL drivers) becomes a number, or a string when too large.
 */
const jsonTextOf = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value) as string | undefined
  } catch (error) {
    if (error instanceof TypeError && String(error.message).includes("BigInt")) return JSON.stringify(value, bigintSafe) as string | undefined
    throw error
  }
}

/** JSON text of a result. One JSON has no text for cannot be answered: it throws, and the request is a 500. */
export const serializeJson = (value: unknown): string => {
  const text = jsonTextOf(value)
  if (text === undefined) throw new TypeError(`The result has no JSON text: ${typeof value === "object" ? "its toJSON() gave undefined" : `it is a ${typeof value}`}`)
  return text
}

const serialize = (format: OutputFormat, value: unknown): string =>
  format === "json" ? serializeJson(value) : format === "csv" ? toCsv(value) : toNdjson(value, jsonTextOf)

/** What CSV and NDJSON hold of a result: a page's rows alone, without the page. */
const rowsOf = (plan: EndpointPlan, value: unknown): unknown =>
  plan.answersPages && typeof value === "object" && value !== null ? (value as { readonly data?: unknown }).data : value

/** The result's text in `representation`: a cached entry's JSON text as it is stored. */
const bodyIn = (plan: EndpointPlan, representation: Representation, value: unknown, stored: StoredResult | undefined): string =>
  representation.format === "json"
    ? stored === undefined ? serializeJson(value) : stored.json
    : serialize(representation.format, rowsOf(plan, stored === undefined ? value : stored.parse()))

/** What an in-process `execute` gets: the status only, the value itself is returned unserialized. */
const IN_PROCESS_OK: ShapedOutput = { status: 200, headers: Object.freeze({}), body: null }
const IN_PROCESS_NO_CONTENT: ShapedOutput = { status: 204, headers: Object.freeze({}), body: null }

/** The answer with its ETag: 304 without a body when the client holds this version. */
const validated = (
  ctx: RequestContext,
  headers: Record<string, string>,
  body: string,
  etag: string,
  compressed: CompressedBodies | undefined
): ShapedOutput => {
  headers.etag = etag
  if (!ifNoneMatchHits(getHeader(ctx.request, "if-none-match"), etag)) return compressed === undefined ? { status: 200, headers, body } : { status: 200, headers, body, compressed }
  delete headers["content-type"]
  return { status: 304, headers, body: null }
}

/**
 * Output shaping: the result in the representation asked for, Cache-Control from the endpoint's TTL
 * (or `ctx.setCacheTtl`), and with caching on a strong ETag, `Vary: Accept` when the format was
 * negotiated, and 304 for a matching If-None-Match. Throws NotAcceptable (406) for a result the
 * format cannot hold. Without a representation (in-process calls) nothing is serialized. A result
 * from the result cache (StoredResult) is sent as its JSON text, or shaped from it for CSV and NDJSON.
 * A promise only when a large body is digested asynchronously (the web build's Web Crypto).
 */
export const shapeOutput = (
  plan: EndpointPlan,
  ctx: RequestContext,
  value: unknown,
  representation: Representation | undefined
): MaybePromise<ShapedOutput> => {
  if (representation === undefined) return value === undefined ? IN_PROCESS_NO_CONTENT : IN_PROCESS_OK
  const ttlMs = ctx.cacheTtlOverride === undefined ? plan.info.cacheTtlMs : ctx.cacheTtlOverride
  const cache = cacheControl(plan, ttlMs)
  const headers: Record<string, string> = {}
  if (ctx.cacheStatus !== undefined) headers["x-cache"] = ctx.cacheStatus
  if (value === undefined) {
    if (cache !== undefined) headers["cache-control"] = cache
    return { status: 204, headers, body: null }
  }
  if (value instanceof RowStream) return streamedOutput(ctx, headers, cache, value, representation)
  const stored = value instanceof StoredResult ? value : undefined
  let body: string
  try {
    body = bodyIn(plan, representation, value, stored)
  } catch (error) {
    // CSV or NDJSON cannot hold this result, and Accept takes JSON too: JSON it is, not a 406.
    if (!(error instanceof NotAcceptable && representation.orJson !== undefined)) throw error
    representation = representation.orJson
    body = bodyIn(plan, representation, value, stored)
  }
  // A cached entry's JSON text goes out as it is stored: its ETag and compressed forms are kept with it.
  const entry = stored !== undefined && body === stored.json ? stored : undefined
  const compressed = entry?.compressed
  headers["content-type"] = CONTENT_TYPES[representation.format]
  if (cache === undefined || ttlMs === null || ttlMs <= 0) {
    if (cache !== undefined) headers["cache-control"] = cache
    return compressed === undefined ? { status: 200, headers, body } : { status: 200, headers, body, compressed }
  }
  headers["cache-control"] = cache
  // `Accept` when the format was negotiated, and the credential headers of an answer that depends on the caller.
  const vary = representation.varyOnAccept ? plan.vary.negotiated : plan.vary.fixed
  if (vary !== "") headers.vary = vary
  // The ETag of a stored JSON text is computed once per entry (equal bytes, equal tag); `no-store`
  // answers (no TTL) are never reused, so they get no validator.
  const etag = entry !== undefined ? (entry.etag ??= strongEtag(body)) : strongEtag(body)
  return isPromiseLike(etag)
    ? etag.then((tag) => validated(ctx, headers, body, tag, compressed))
    : validated(ctx, headers, body, etag, compressed)
}

/** The opening of a streamed answer in `representation` from its first row (`first`: none when `done`). */
const openingOf = (representation: Representation, first: IteratorResult<unknown>, stream: RowStream): StreamedBody => {
  const writer = rowWriter(representation.format, jsonTextOf)
  return first.done === true
    ? { stream, writer, opening: writer.empty(), more: false }
    : { stream, writer, opening: writer.first(first.value), more: true }
}

/**
 * A streamed answer, once its first row is read: an error before it, or a first row the format
 * cannot hold, is answered like every other failure (the stream is then ended). It is never validated
 * (no ETag) and never stored; it has no Content-Length.
 */
const streamedOutput = (
  ctx: RequestContext,
  headers: Record<string, string>,
  cache: string | undefined,
  stream: RowStream,
  representation: Representation
): Promise<ShapedOutput> => {
  stream.request = ctx.request
  return stream.start(ctx.signal).then((first) => {
    let streamed: StreamedBody
    try {
      try {
        streamed = openingOf(representation, first, stream)
      } catch (error) {
        if (!(error instanceof NotAcceptable && representation.orJson !== undefined)) throw error
        representation = representation.orJson
        streamed = openingOf(representation, first, stream)
      }
    } catch (error) {
      stream.cancel(error)
      throw error
    }
    headers["content-type"] = CONTENT_TYPES[representation.format]
    if (cache !== undefined) headers["cache-control"] = cache
    return { status: 200, headers, body: null, streamed }
  })
}
