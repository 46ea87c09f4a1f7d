import type { IncomingMessage, ServerResponse } from "node:http"
import { finished } from "node:stream"
import { ClientClosed } from "../domain/clientClosed.js"
import { InternalError, PayloadTooLarge, type ServeError, shuttingDown, ValidationError } from "../domain/errors.js"
import { forwardedAddress, type ServeHandler, type ServeResponse, trustedHopCount } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { splitUrl } from "../domain/queryString.js"
import { TransportRequest } from "../domain/transportRequest.js"
import { type DeadlineQueue, deadlineQueue, deliverInTime } from "./deadlines.js"
import { closeUnlessRead, DEFAULT_RESPONSE_TIMEOUT, inTurns } from "./nodeConnection.js"
import { writeResponse, writeStreamed } from "./nodeResponse.js"
import { streamedBodyOf } from "../stages/rowStream.js"
import {
  adapterErrorResponse,
  adapterFault,
  checkedBodyLimit,
  checkMilliseconds,
  payloadTooLarge,
  type TransportOptions
} from "./transport.js"

export interface NodeHandlerOptions extends TransportOptions {
  /**
   * Milliseconds the client has to take an answer written to it (default 30 s; 0 = none): a buffered
   * answer all of it, a streamed one each part the socket had to hold. Past it the connection is closed.
   */
  readonly responseTimeoutMs?: number
}

/** What `createNodeHandler` returns: a listener whose promise settles once the response is written (or the client left). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>

/** The listener a server calls; nobody waits on it. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void

/** Lets a server refuse new requests while it drains, and know when the last one in flight was answered. */
export interface RequestGate {
  readonly draining: boolean
  enter(): void
  leave(): void
}

/** As the fetch handler: no body is read for GET, HEAD or OPTIONS (a preflight's body means nothing). */
const hasBody = (req: IncomingMessage): boolean =>
  req.method !== "GET" && req.method !== "HEAD" && req.method !== "OPTIONS" &&
  (req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined)

/**
 * Reads the body as text, then calls `done` with it, or `failed` with 413 as soon as more than `limit`
 * bytes arrived (and stops reading) or with the stream's error; only the first outcome counts.
 * Callbacks, not a promise: the answer is written from the 'end' event itself, one promise and one
 * microtask less per request.
 */
const readBody = (
  req: IncomingMessage,
  limit: number,
  done: (body: string) => void,
  failed: (error: unknown) => void
): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  let settled = false
  const onData = (chunk: Buffer): void => {
    size += chunk.length
    if (size <= limit) return void chunks.push(chunk)
    req.off("data", onData)
    req.pause()
    settled = true
    failed(payloadTooLarge(limit))
  }
  req.on("data", onData)
  req.on("end", () => {
    if (settled) return
    settled = true
    done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
  })
  req.on("error", (error) => {
    if (settled) return
    settled = true
    failed(error)
  })
}

/**
 * The body, when node:http has parsed all of it already: a small body sent with its head arrives in
 * the same read, whose parsing node:http finishes after the 'request' listener returns, so once the
 * event loop's reads are done (`setImmediate`; not a microtask: node:http parses a socket's read in
 * C++ and runs microtasks after each event it hands to JavaScript, before the body's) the message
 * is complete and its body sits in the stream's buffer. One `read()` takes it without the 'data' and
 * 'end' events and the ticks they cost (about a third of a small POST in node:http). Undefined when
 * the body is still on its way, or someone else is reading the stream.
 */
const bufferedBody = (req: IncomingMessage): Buffer | null | undefined =>
  req.complete && req.readableFlowing === null ? req.read() as Buffer | null : undefined

const missingHost = new ValidationError({
  message: "An HTTP/1.1 request needs a Host header",
  issues: [{ path: ["headers", "host"], message: "is required" }]
})

/**
 * The Node listener behind `createNodeHandler` and `startNodeServer`. It only translates: body
 * limit, deadline and client address on the way in, status/headers/body on the way out; the turns
 * of a connection and the time its client has to read are kept by nodeConnection.ts.
 */
export const makeNodeListener = (
  handler: ServeHandler,
  options: NodeHandlerOptions,
  gate: RequestGate | undefined
): RequestListener => {
  const limit = checkedBodyLimit(options)
  checkMilliseconds("responseTimeoutMs", options.responseTimeoutMs, `0 for none; default ${DEFAULT_RESPONSE_TIMEOUT}`)
  const responseTimeoutMs = options.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT
  const trustedHops = trustedHopCount(options.trustProxy)
  const cors = handler.corsHeaders
  const deadlines: DeadlineQueue | undefined = deadlineQueue(options.requestTimeout)

  const rowTimeoutMs = deadlines?.timeoutMs ?? 0

  /**
   * Writes the one answer of an admitted request; later attempts (a late handler after a 504) are
   * dropped, and a late streamed one is ended. A streamed answer leaves the gate once its last row is written.
   */
  const send = (res: ServerResponse, response: ServeResponse, close: boolean): void => {
    const streamed = streamedBodyOf(response)
    if (res.headersSent) return streamed?.stream.cancel(new ClientClosed())
    // While draining, no connection is kept alive for another request.
    if (gate?.draining === true) close = true
    if (streamed !== undefined) {
      return writeStreamed(res, response, streamed, close, cors, { rowTimeoutMs, responseTimeoutMs }, () => gate?.leave())
    }
    gate?.leave()
    writeResponse(res, response, close, cors)
    // A client that does not read its answer must not hold the connection and the answer for ever.
    closeUnlessRead(res, responseTimeoutMs)
  }
  const fail = (req: IncomingMessage, res: ServerResponse, error: ServeError, close = false): void =>
    send(res, adapterErrorResponse(error, req.headers, cors), close)

  const failRead = (req: IncomingMessage, res: ServerResponse, error: unknown): void =>
    error instanceof PayloadTooLarge ? fail(req, res, error, true) : fail(req, res, new InternalError({ cause: error }))

  const awaitAnswer = (res: ServerResponse, request: TransportRequest, answer: PromiseLike<ServeResponse>): void => {
    res.on("close", () => {
      if (!res.writableFinished) request.abort(new ClientClosed())
    })
    deliverInTime(deadlines, request, answer, (response) => send(res, response, false), cors)
  }

  const dispatch = (req: IncomingMessage, res: ServerResponse, body: unknown): void => {
    const { path, rawQuery } = splitUrl(req.url ?? "/")
    const remoteAddress = forwardedAddress(req.headers["x-forwarded-for"], trustedHops) ?? req.socket.remoteAddress
    const request = new TransportRequest(req.method ?? "GET", path, rawQuery, req.headers, body, remoteAddress, req)
    let answer: ReturnType<ServeHandler>
    try {
      answer = handler(request)
    } catch (error) {
      return fail(req, res, adapterFault(error))
    }
    if (isPromiseLike(answer)) awaitAnswer(res, request, answer)
    else send(res, answer, false)
  }

  /** One request, once its connection's earlier requests were answered. */
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    if (gate !== undefined) {
      if (gate.draining) return writeResponse(res, adapterErrorResponse(shuttingDown, req.headers, cors), true, cors)
      gate.enter()
    }
    // RFC 9112 requires Host; startNodeServer leaves this check to us, as node:http's own answers a bare 400.
    if (req.headers.host === undefined && req.httpVersionMinor === 1) return fail(req, res, missingHost, true)
    if (!hasBody(req)) return dispatch(req, res, undefined)
    // A framework in front (Express body parsers, serverless runtimes) may have read the body already.
    if (req.readableEnded) return dispatch(req, res, (req as { body?: unknown }).body)
    if (Number(req.headers["content-length"]) > limit) return fail(req, res, payloadTooLarge(limit), true)
    setImmediate(() => {
      const buffered = bufferedBody(req)
      if (buffered === undefined) return readBody(req, limit, (body) => dispatch(req, res, body), (error) => failRead(req, res, error))
      // A chunked body has no length up front: its size is known only now.
      if (buffered !== null && buffered.length > limit) return fail(req, res, payloadTooLarge(limit), true)
      dispatch(req, res, buffered === null ? "" : buffered.toString("utf8"))
    })
  }

  // Pipelined requests wait for the answer before theirs: one connection runs one query at a time.
  return inTurns(serve)
}

/**
 * Settles once the response is written. A response object that is no stream (a test's or a
 * serverless shim's stand-in, which node:stream's `finished` refuses) counts as written when its
 * `end()` is called.
 */
const written = (res: ServerResponse): Promise<void> =>
  res.writableFinished ? Promise.resolve() : new Promise((resolve) => {
    try {
      finished(res, () => resolve())
    } catch {
      const end = res.end
      res.end = function (this: ServerResponse, ...args: Parameters<ServerResponse["end"]>) {
        resolve()
        return end.apply(this, args)
      } as ServerResponse["end"]
    }
  })

/**
 * A Node `(req, res)` listener over a ServeHandler, for your own `http.createServer` or framework.
 * Frameworks that await their handlers (and code written for @hypequery/serve) get a promise that
 * settles once the response is written; it never rejects.
 */
export const createNodeHandler = (handler: ServeHandler, options: NodeHandlerOptions = {}): NodeListener => {
  const listener = makeNodeListener(handler, options, undefined)
  return (req, res) => {
    const done = written(res)
    try {
      listener(req, res)
    } catch (error) {
      // The request or response object lacks what a Node one has: said, and settled, never a rejection.
      console.error("[queryserve] createNodeHandler could not answer this request", error)
      return Promise.resolve()
    }
    return done
  }
}
