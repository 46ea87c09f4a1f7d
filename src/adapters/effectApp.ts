import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FiberId from "effect/FiberId"
import { identity } from "effect/Function"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ClientClosed } from "../domain/clientClosed.js"
import { InternalError, PayloadTooLarge } from "../domain/errors.js"
import { type CorsHeaders, HEAD_OF, type HeaderMap, type HeadResponse, type HttpMethod, type ServeHandler, type ServeResponse } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { splitUrl } from "../domain/queryString.js"
import { TransportRequest } from "../domain/transportRequest.js"
import { rowIterator } from "../stages/rowSource.js"
import { readableRows, type StreamedBody, streamedBodyOf } from "../stages/rowStream.js"
import { adapterErrorResponse, checkedBodyLimit, concatBytes, payloadTooLarge } from "./transport.js"

const METHODS_WITH_BODY: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH", "DELETE"])

const encoder = new TextEncoder()

/** The chunks `pull` gives until the stream ends, refused with 413 the moment they pass `limit`. */
const collectedBody = (
  pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<unknown>>,
  limit: number
): Effect.Effect<Uint8Array, unknown> =>
  Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    const next: Effect.Effect<Uint8Array, unknown> = Effect.matchEffect(pull, {
      onFailure: Option.match({ onNone: () => Effect.succeed(concatBytes(chunks, size)), onSome: Effect.fail }),
      onSuccess: (chunk) => {
        for (const bytes of chunk) {
          chunks.push(bytes)
          size += bytes.byteLength
        }
        return size > limit ? Effect.fail(payloadTooLarge(limit)) : next
      }
    })
    return next
  })

/**
 * The body as it streams in, refused with 413 the moment it passes `limit`. A refused body is left
 * paused, its stream not closed: on @effect/platform-node closing it destroys the request, and with
 * it the socket, before the 413 is written. Node stops reading once the request's buffer is full and
 * closes the connection after the 413 (`Connection: close`), which ends the request too.
 */
const streamedBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array, unknown> =>
  Effect.flatMap(Scope.make(), (scope) =>
    Scope.extend(Stream.toPull(request.stream), scope).pipe(
      Effect.flatMap((pull) => collectedBody(pull, limit)),
      Effect.onExit((exit) => (refusedAsTooLarge(exit) ? Effect.void : Scope.close(scope, exit)))
    ))

const refusedAsTooLarge = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (error) => error instanceof PayloadTooLarge)

/**
 * The body a middleware in front has read already (to check a signature, say): @effect/platform
 * memoizes `request.text` per request. It was read under the middleware's limit; ours is checked here.
 */
const bodyReadBefore = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array, unknown> =>
  Effect.flatMap(request.text, (text) => {
    const bytes = encoder.encode(text)
    return bytes.byteLength > limit ? Effect.fail(payloadTooLarge(limit)) : Effect.succeed(bytes)
  })

/** HTTP/1.1 frames a request body with one of these; a request with neither has none (RFC 9112 6.3). */
const announcesBody = (headers: HeaderMap): boolean =>
  Number(headers["content-length"]) > 0 || headers["transfer-encoding"] !== undefined

/**
 * The body, refused with 413 by Content-Length or while it streams. A stream read before is empty
 * (Node) or cannot be read (fetch): the body is then the memoized text, not nothing, which would make
 * the input silently fall back to the query string.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array, unknown> => {
  if (Number(request.headers["content-length"]) > limit) return Effect.fail(payloadTooLarge(limit))
  // On fetch runtimes a locked body makes the stream die, not fail: a defect would escape as an empty 500.
  const streamed = Effect.catchAllDefect(streamedBody(request, limit), Effect.fail)
  return Effect.matchEffect(streamed, {
    onFailure: (error) => (error instanceof PayloadTooLarge ? Effect.fail(error) : bodyReadBefore(request, limit)),
    onSuccess: (bytes) =>
      bytes.byteLength === 0 && announcesBody(request.headers) ? bodyReadBefore(request, limit) : Effect.succeed(bytes)
  })
}

/**
 * The 413 closes the connection, as queryserve's Node adapter does: the body was left unread, and on a
 * kept-alive connection Node would read all of it (or wait for it) before the next request.
 */
const refusedBodyResponse = (error: PayloadTooLarge, requestHeaders: HeaderMap, cors: CorsHeaders | undefined): ServeResponse => {
  const response = adapterErrorResponse(error, requestHeaders, cors)
  return { ...response, headers: { ...response.headers, connection: "close" } }
}

// node:http's rules, the strictest of the servers an HttpApp runs on (fetch Headers take a subset):
// a name is a token, a value has no control character but tab.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const INVALID_VALUE_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/

/** Why the HTTP server would refuse these headers; undefined when it takes them. */
const refusedHeader = (headers: Readonly<Record<string, string>>): TypeError | undefined => {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return new TypeError(`Header name must be a valid HTTP token ["${name}"]`)
    if (INVALID_VALUE_CHARACTER.test(value)) return new TypeError(`Invalid character in header content ["${name}"]`)
  }
  return undefined
}

/**
 * The response, or a 500 envelope instead of one the server would refuse (a CR or LF a handler put
 * into ctx.setHeader): the platform would answer that with an empty 500, without request id or CORS.
 */
const sendable = (response: ServeResponse, requestHeaders: HeaderMap, cors: CorsHeaders | undefined): ServeResponse => {
  const refused = refusedHeader(response.headers)
  if (refused === undefined) return response
  console.error("[queryserve] the HTTP server would refuse the response; answering 500 instead", refused)
  streamedBodyOf(response)?.stream.cancel(refused)
  return adapterErrorResponse(new InternalError({ cause: refused }), requestHeaders, cors)
}

/** A HEAD answer has the headers its GET would have, Content-Type and Content-Length included, and no body. */
const headResponse = (response: ServeResponse, omitted: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.empty({
    status: response.status,
    headers: { ...response.headers, "content-length": String(encoder.encode(omitted).byteLength) }
  })

/** What cutConnection uses of a node:http socket, structurally: this module loads on any runtime. */
interface NodeSocket {
  readonly writableCorked: number
  uncork(): void
  destroy(): void
}

/**
 * Ends the connection of a streamed answer that failed after its head: @effect/platform-node would end
 * the response as if complete. There the request's source is node:http's IncomingMessage, whose socket
 * is destroyed; on fetch-based servers the failed body stream cuts the transfer by itself.
 */
const cutConnection = (request: HttpServerRequest.HttpServerRequest): void => {
  const socket = (request.source as { readonly socket?: Partial<NodeSocket> } | null)?.socket
  if (typeof socket?.destroy !== "function" || typeof socket.uncork !== "function") return
  // node:http corks the socket for a tick after each write: what was written (the head and first rows) goes out first.
  while ((socket.writableCorked ?? 0) > 0) socket.uncork()
  socket.destroy()
}

/**
 * A streamed answer's rows as an Effect Stream of chunks, pulled as the server takes them (the same
 * pulling body as the fetch handler's). The opening (the first row) is a chunk of its own: the server
 * sends the head with it, before the next rows are read. The server interrupting the stream (the client
 * left) ends the iteration. toHttpApp has no timeout of its own: a row may take as long as the server allows.
 */
const streamedRows = (request: HttpServerRequest.HttpServerRequest, streamed: StreamedBody): Stream.Stream<Uint8Array, unknown> => {
  const rest = { ...streamed, opening: "" }
  return Stream.succeed(encoder.encode(streamed.opening)).pipe(
    Stream.concat(Stream.fromAsyncIterable({ [Symbol.asyncIterator]: () => rowIterator(readableRows(rest, 0)) }, identity)),
    Stream.onError(() => Effect.sync(() => cutConnection(request))),
    // Interrupted before the rows' part began, the stream was not cancelled yet; otherwise this does nothing.
    Stream.ensuring(Effect.sync(() => streamed.stream.cancel(new ClientClosed())))
  )
}

/**
 * On a fetch-based server the client leaving aborts the web Request's signal, and a body nobody
 * began to read would never end its iteration: the rows' stream is cancelled then. (On Node the
 * server always runs the body, and its failed writes end it.)
 */
const endWhenClientLeaves = (request: HttpServerRequest.HttpServerRequest, streamed: StreamedBody): void => {
  const signal = (request.source as { readonly signal?: unknown } | null)?.signal
  if (!(signal instanceof AbortSignal)) return
  const leave = () => streamed.stream.cancel(new ClientClosed())
  if (signal.aborted) return leave()
  signal.addEventListener("abort", leave, { once: true })
  streamed.stream.onEnd(() => signal.removeEventListener("abort", leave))
}

const toHttpServerResponse = (response: ServeResponse, request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse => {
  const omitted = (response as HeadResponse)[HEAD_OF]
  if (typeof omitted === "string") return headResponse(response, omitted)
  const streamed = streamedBodyOf(response)
  // An empty answer keeps its Content-Type (a streamed answer's HEAD has one); a body brings its own.
  if (response.body === null && streamed === undefined) return HttpServerResponse.empty({ status: response.status, headers: response.headers })
  const { "content-type": contentType, ...headers } = response.headers
  const options = { status: response.status, headers, contentType }
  if (streamed === undefined) return HttpServerResponse.text(response.body ?? "", options)
  endWhenClientLeaves(request, streamed)
  return HttpServerResponse.stream(streamedRows(request, streamed), options)
}

/**
 * Why the request was interrupted: the platform's servers interrupt a request whose client left with
 * their own fiber id (reported as 499, like the other adapters' client closes); anything else (a
 * timeout of yours) is a plain AbortError, and the pipeline answers it as it would any failure.
 */
const interruptionReason = (interruptors: HashSet.HashSet<FiberId.FiberId>): DOMException =>
  HashSet.has(interruptors, HttpServerError.clientAbortFiberId)
    ? new ClientClosed()
    : new DOMException("The request was interrupted", "AbortError")

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
    }).pipe(Effect.onInterrupt((interruptors) => Effect.sync(() => request.abort(interruptionReason(interruptors)))))
  })

/** What `toHttpApp` serves once @effect/platform is loaded. */
export interface HttpAppOptions {
  /**
   * Largest accepted request body in bytes (default 1 MiB): 413, with `Connection: close`, by
   * Content-Length or while streaming.
   */
  readonly bodyLimit?: number
}

export const makeHttpApp = (api: { readonly handler: ServeHandler }, options: HttpAppOptions): HttpApp.Default => {
  const limit = checkedBodyLimit(options)
  const cors = api.handler.corsHeaders
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
          error instanceof PayloadTooLarge
            ? refusedBodyResponse(error, request.headers, cors)
            : adapterErrorResponse(new InternalError({ cause: error }), request.headers, cors)
        )
      ),
      Effect.map((response) => toHttpServerResponse(sendable(response, request.headers, cors), request)),
      // Platform servers run each request uninterruptibly and HttpRouter makes its routes interruptible,
      // but not mounted apps: without this a client abort or the user's timeout could not reach `ctx.signal`.
      Effect.interruptible
    )
  })
}
