import { toErrorResponse } from "../domain/envelope.js"
import { type ServeError, toServeError } from "../domain/errors.js"
import type { ServeResponse } from "../domain/http.js"
import type { RequestContext } from "./context.js"
import { cacheControl, serializeJson } from "./output.js"
import type { EndpointPlan } from "./plan.js"

const JSON_CONTENT_TYPE = "application/json; charset=utf-8"

/** The outcome of one endpoint execution, before it is turned into a response or a thrown error. */
export type Settled =
  | { readonly ok: true; readonly value: unknown; readonly ctx: RequestContext; readonly plan: EndpointPlan }
  | { readonly ok: false; readonly error: ServeError; readonly ctx: RequestContext | undefined }

/** Headers every response carries: the request id, CORS, and those set through `ctx.setHeader`. */
export const finishHeaders = (
  headers: Record<string, string>,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> | undefined
): Record<string, string> => {
  headers["x-request-id"] = requestId
  if (corsHeaders !== undefined) Object.assign(headers, corsHeaders)
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
  const headers = finishHeaders({ "content-type": JSON_CONTENT_TYPE }, requestId, corsHeaders, ctx?.responseHeaders)
  if (mapped.headers !== undefined) Object.assign(headers, mapped.headers)
  return { status: mapped.status, headers, body: JSON.stringify(mapped.envelope) }
}

/** Output shaping's last step: the settled outcome as a serialized response. */
export const toResponse = (
  settled: Settled,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  head: boolean
): ServeResponse => {
  if (!settled.ok) return errorResponse(settled.error, requestId, corsHeaders, settled.ctx)
  const { ctx, plan, value } = settled
  let body: string | null
  try {
    body = value === undefined ? null : serializeJson(value)
  } catch (thrown) {
    return errorResponse(toServeError(thrown), requestId, corsHeaders, ctx)
  }
  const headers: Record<string, string> = body === null ? {} : { "content-type": JSON_CONTENT_TYPE }
  const cache = cacheControl(plan, ctx.cacheTtlOverride === undefined ? plan.info.cacheTtlMs : ctx.cacheTtlOverride)
  if (cache !== undefined) headers["cache-control"] = cache
  finishHeaders(headers, requestId, corsHeaders, ctx.responseHeaders)
  return { status: body === null ? 204 : 200, headers, body: head ? null : body }
}
