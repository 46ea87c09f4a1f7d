import { isServeError, toServeError } from "../domain/errors.js"
import { HEAD_OF, type HeadResponse, type HttpMethod, type ServeRequest, type ServeResponse } from "../domain/http.js"
import { isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import type { Lifecycle } from "./lifecycle.js"
import { errorResponse, finishHeaders } from "./respond.js"

/** What a static route answers; a ServeError it throws or rejects with is answered with its envelope. */
export type StaticAnswer = Omit<ServeResponse, "headers"> & { readonly headers?: Record<string, string> }

/** A route that is not an endpoint (docs page, OpenAPI document, static assets, metrics, the MCP endpoint). */
export interface StaticRoute {
  readonly method: HttpMethod
  readonly path: string
  /** The `queryKey` the auth hooks report when this route refuses a caller (`$mcp`, `$metrics`); none: no hooks. */
  readonly key?: string
  /** It gives way to any other route at its path (the API's index at `basePath`). */
  readonly yields?: boolean
  /** `requestId` is the one the response carries in `X-Request-Id`. */
  readonly respond: (request: ServeRequest, requestId: string) => MaybePromise<StaticAnswer>
}

const finish = (
  answer: StaticAnswer,
  request: ServeRequest,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined
): ServeResponse => {
  const headers = finishHeaders({ ...answer.headers }, requestId, corsHeaders, undefined)
  if (request.method === "HEAD") {
    const head: HeadResponse = { status: answer.status, headers, body: null, [HEAD_OF]: answer.body }
    return head
  }
  return answer.compressed !== undefined
    ? { status: answer.status, headers, body: answer.body, compressed: answer.compressed }
    : { status: answer.status, headers, body: answer.body }
}

const refuse = (
  route: StaticRoute,
  thrown: unknown,
  request: ServeRequest,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  lifecycle: Lifecycle
): ServeResponse => {
  const error = toServeError(thrown)
  // A route's own refusals (401, 403) are answers the auth hooks hear of; anything else is a fault nobody else will report.
  if (!isServeError(thrown)) console.error(`[queryserve] ${route.method} ${route.path} failed`, thrown)
  else if (route.key !== undefined) lifecycle.refused(route.key, requestId, request, error)
  return errorResponse(error, requestId, corsHeaders, undefined)
}

/** A static route's answer with the common headers; what it throws is answered like a pipeline error. Closures only on the async path. */
export const answerStatic = (
  route: StaticRoute,
  request: ServeRequest,
  requestId: string,
  corsHeaders: Readonly<Record<string, string>> | undefined,
  lifecycle: Lifecycle
): MaybePromise<ServeResponse> => {
  let answer: MaybePromise<StaticAnswer>
  try {
    answer = route.respond(request, requestId)
  } catch (thrown) {
    return refuse(route, thrown, request, requestId, corsHeaders, lifecycle)
  }
  if (!isPromiseLike(answer)) return finish(answer, request, requestId, corsHeaders)
  return Promise.resolve(answer).then(
    (settled) => finish(settled, request, requestId, corsHeaders),
    (thrown: unknown) => refuse(route, thrown, request, requestId, corsHeaders, lifecycle)
  )
}
