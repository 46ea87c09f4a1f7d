import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { InternalError, PayloadTooLarge } from "../domain/errors.js"
import type { HttpMethod, ServeHandler, ServeResponse } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { splitUrl } from "../domain/queryString.js"
import { TransportRequest } from "../domain/transportRequest.js"
import type { HttpAppOptions } from "./effect.js"
import { adapterErrorResponse, checkedBodyLimit, concatBytes, payloadTooLarge } from "./transport.js"

const METHODS_WITH_BODY: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH", "DELETE"])

const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array, unknown> => {
  if (Number(request.headers["content-length"]) > limit) return Effect.fail(payloadTooLarge(limit))
  return Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return Stream.runForEach(request.stream, (chunk) => {
      size += chunk.byteLength
      if (size > limit) return Effect.fail(payloadTooLarge(limit))
      chunks.push(chunk)
      return Effect.void
    }).pipe(Effect.map(() => concatBytes(chunks, size)))
  })
}

const toHttpServerResponse = (response: ServeResponse): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...headers } = response.headers
  return response.body === null
    ? HttpServerResponse.empty({ status: response.status, headers })
    : HttpServerResponse.text(response.body, { status: response.status, headers, contentType })
}

/** The handler's answer as an Effect; interrupting it (client gone, a timeout of yours) aborts `ctx.signal`. */
const answer = (handler: ServeHandler, request: TransportRequest): Effect.Effect<ServeResponse> =>
  Effect.suspend(() => {
    const pending = handler(request)
    if (!isPromiseLike(pending)) return Effect.succeed(pending)
    return Effect.async<ServeResponse>((resume) => {
      pending.then(
        (response) => resume(Effect.succeed(response)),
        (error: unknown) => resume(Effect.succeed(adapterErrorResponse(new InternalError({ cause: error }), request.headers, handler.corsHeaders)))
      )
      return Effect.sync(() => request.abort(new DOMException("The request was interrupted", "AbortError")))
    })
  })

/** What `toHttpApp` serves once @effect/platform is loaded. */
export const makeHttpApp = (api: { readonly handler: ServeHandler }, options: HttpAppOptions): HttpApp.Default => {
  const limit = checkedBodyLimit(options)
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const method = request.method
    const body: Effect.Effect<Uint8Array | undefined, unknown> = METHODS_WITH_BODY.has(method)
      ? readBody(request, limit)
      : Effect.succeed(undefined)
    return Effect.all([body, Effect.option(Effect.currentParentSpan)]).pipe(
      Effect.flatMap(([bytes, span]) => {
        const { path, rawQuery } = splitUrl(request.originalUrl)
        const remoteAddress = Option.getOrUndefined(request.remoteAddress)
        const serveRequest = new TransportRequest(
          method, path, rawQuery, request.headers, bytes, remoteAddress, request, undefined, Option.getOrUndefined(span)
        )
        return answer(api.handler, serveRequest)
      }),
      Effect.catchAll((error) =>
        Effect.succeed(
          adapterErrorResponse(
            error instanceof PayloadTooLarge ? error : new InternalError({ cause: error }),
            request.headers,
            api.handler.corsHeaders
          )
        )
      ),
      Effect.map(toHttpServerResponse),
      // Platform servers run each request uninterruptibly and HttpRouter makes its routes interruptible,
      // but not mounted apps: without this a client abort or the user's timeout could not reach `ctx.signal`.
      Effect.interruptible
    )
  })
}
