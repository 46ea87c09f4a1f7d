import { toErrorResponse } from "../domain/envelope.js"
import type { ServeError } from "../domain/errors.js"
import { HEAD_OF, type HeadResponse, type ServeResponse } from "../domain/http.js"
import type { RequestContext } from "./context.js"
import { CONTENT_TYPES } from "./formats.js"
import type { ShapedOutput } from "./output.js"

/** The outcome of one endpoint execution, before it is turned into a response or a thrown error. */
export type Settled =
  | { readonly ok: true; readonly value: unknown; readonly ctx: RequestContext; readonly output: ShapedOutput }
  | { readonly ok: false; readonly error: ServeError; readonly ctx: RequestContext | undefined }

/** Headers every response carries: the request id, CORS, and those set through `ctx.setHeader`. */
export const finishHeaders = (
  headers: Record<string, string>,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> | undefined
): Record<string, string> => {
  headers["x-request-id"] = requestId
  if (corsHeaders !== undefined) {
    // Both output shaping (Accept) and CORS (Origin) may vary the answer: keep both.
    const vary = headers.vary
    Object.assign(headers, corsHeaders)
    if (vary !== undefined && corsHeaders.vary !== undefined) headers.vary = `${vary}, ${corsHeaders.vary}`
  }
  if (extra !== undefined) Object.assign(headers, extra)
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
  if (head) {
    const answer: HeadResponse = { status: output.status, headers, body: null, [HEAD_OF]: output.body }
    return answer
  }
  return output.compressed === undefined
    ? { status: output.status, headers, body: output.body }
    : { status: output.status, headers, body: output.body, compressed: output.compressed }
}
