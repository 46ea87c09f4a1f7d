import { toErrorResponse } from "../domain/envelope.js"
import type { ServeError } from "../domain/errors.js"
import { HEAD_OF, type HeadResponse, type ServeResponse } from "../domain/http.js"
import type { RequestContext } from "./context.js"
import { CONTENT_TYPES } from "./formats.js"
import type { ShapedOutput } from "./output.js"
import { STREAMED, type StreamedResponse } from "./rowStream.js"

/** The outcome of one endpoint execution, before it is turned into a response or a thrown error. */
export type Settled =
  | { readonly ok: true; readonly value: unknown; readonly ctx: RequestContext; readonly output: ShapedOutput }
  | { readonly ok: false; readonly error: ServeError; readonly ctx: RequestContext | undefined }

/**
 * Both `Vary` values' field names, each once (names are case-insensitive; the first spelling is kept).
 * `*` already says the answer varies on everything, so it stays alone.
 */
const mergeVary = (vary: string | undefined, more: string | undefined): string | undefined => {
  if (vary === undefined || more === undefined) return vary ?? more
  const names = new Map<string, string>()
  for (const name of `${vary},${more}`.split(",")) {
    const trimmed = name.trim()
    if (trimmed.length > 0 && !names.has(trimmed.toLowerCase())) names.set(trimmed.toLowerCase(), trimmed)
  }
  return names.has("*") ? "*" : [...names.values()].join(", ")
}

/** Sets `added` on `headers`, merging its `Vary` with the one already there. */
const assignHeaders = (headers: Record<string, string>, added: Readonly<Record<string, string>>): void => {
  const vary = mergeVary(headers.vary, added.vary)
  Object.assign(headers, added)
  if (vary !== undefined) headers.vary = vary
}

/**
 * Headers every response carries: the request id, CORS, and those set through `ctx.setHeader`.
 * Output shaping (Accept), CORS (Origin) and the handler may each vary the answer: a shared cache
 * must know of all of them, so their `Vary` values are merged, not replaced.
 */
export const finishHeaders = (
  headers: Record<string, string>,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> | undefined
): Record<string, string> => {
  headers["x-request-id"] = requestId
  if (corsHeaders !== undefined) assignHeaders(headers, corsHeaders)
  if (extra !== undefined) assignHeaders(headers, extra)
  return headers
}

export const errorResponse = (
  error: ServeError,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  ctx: RequestContext | undefined
): ServeResponse => {
  const mapped = toErrorResponse(error)
  const headers = finishHeaders({ "content-type": CONTENT_TYPES.json }, requestId, corsHeaders, ctx?.responseHeaders)
  // A run of the handler that failed on a cached endpoint was a miss.
  if (ctx?.cacheStatus !== undefined) headers["x-cache"] = ctx.cacheStatus
  if (mapped.headers !== undefined) Object.assign(headers, mapped.headers)
  return { status: mapped.status, headers, body: JSON.stringify(mapped.envelope) }
}

/** The settled outcome as a response: the shaped output (or the error envelope) plus the common headers. */
export const toResponse = (
  settled: Settled,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  head: boolean
): ServeResponse => {
  if (!settled.ok) return errorResponse(settled.error, requestId, corsHeaders, settled.ctx)
  const { output, ctx } = settled
  const headers = finishHeaders(output.headers, requestId, corsHeaders, ctx.responseHeaders)
  if (output.streamed !== undefined) {
    // A HEAD answer takes the headers alone: its rows are never read.
    if (head) output.streamed.stream.cancel(new Error("HEAD request: the rows are not sent"))
    const answer: StreamedResponse = head
      ? { status: output.status, headers, body: null }
      : { status: output.status, headers, body: null, [STREAMED]: output.streamed }
    return answer
  }
  if (head) {
    const answer: HeadResponse = { status: output.status, headers, body: null, [HEAD_OF]: output.body }
    return answer
  }
  return output.compressed === undefined
    ? { status: output.status, headers, body: output.body }
    : { status: output.status, headers, body: output.body, compressed: output.compressed }
}
