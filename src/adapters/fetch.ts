import { PayloadTooLarge } from "../domain/errors.js"
import { forwardedAddress, type ServeHandler, type ServeResponse, trustedHopCount } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { splitUrl } from "../domain/queryString.js"
import { TransportRequest } from "../domain/transportRequest.js"
import { deadlineQueue, deliverInTime } from "./deadlines.js"
import { streamedFetchResponse, toFetchResponse } from "./fetchResponse.js"
import { ClientClosed } from "../domain/clientClosed.js"
import { streamedBodyOf } from "../stages/rowStream.js"
import { adapterErrorResponse, adapterFault, checkedBodyLimit, concatBytes, payloadTooLarge, type TransportOptions } from "./transport.js"

export type FetchHandlerOptions = TransportOptions

export type FetchHandler = (request: Request) => Promise<Response>

const METHODS_WITHOUT_BODY: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/** Rejects with the signal's reason once it aborts. */
const abortOf = (signal: AbortSignal): Promise<never> => {
  const aborted = signal.aborted
    ? Promise.reject(signal.reason)
    : new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }))
  aborted.catch(() => {})
  return aborted
}

/**
 * The body's bytes, refused with 413 by Content-Length or as soon as the stream passes `limit`. Each
 * read also ends when the Request's signal aborts (the client left): a stream that simply stalls
 * then would otherwise keep the request, and its promise, pending for good.
 */
const readBody = async (request: Request, limit: number): Promise<Uint8Array | undefined> => {
  if (request.body === null) return undefined
  if (Number(request.headers.get("content-length")) > limit) throw payloadTooLarge(limit)
  const reader = request.body.getReader()
  const aborted = abortOf(request.signal)
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted])
      if (done) break
      size += value.byteLength
      if (size > limit) throw payloadTooLarge(limit)
      chunks.push(value)
    }
  } catch (error) {
    void reader.cancel().catch(() => {})
    throw error
  }
  return concatBytes(chunks, size)
}

/**
 * A fetch-style `(request: Request) => Promise<Response>` over a ServeHandler, for runtimes that speak
 * the Fetch API (Deno, Bun, edge platforms, Hono, Node behind an adapter). Same limits as the Node server.
 */
export const createFetchHandler = (handler: ServeHandler, options: FetchHandlerOptions = {}): FetchHandler => {
  const limit = checkedBodyLimit(options)
  const deadlines = deadlineQueue(options.requestTimeout)
  const trustedHops = trustedHopCount(options.trustProxy)
  const rowTimeoutMs = deadlines?.timeoutMs ?? 0

  const answer = async (request: Request, headers: Record<string, string>): Promise<ServeResponse> => {
    const method = request.method.toUpperCase()
    const body = METHODS_WITHOUT_BODY.has(method) ? undefined : await readBody(request, limit)
    const { path, rawQuery } = splitUrl(request.url)
    const remoteAddress = forwardedAddress(headers["x-forwarded-for"], trustedHops)
    const serveRequest = new TransportRequest(method, path, rawQuery, headers, body, remoteAddress, request, request.signal)
    const pending = handler(serveRequest)
    if (!isPromiseLike(pending)) return pending
    return new Promise((resolve) => {
      let delivered = false
      // After a 504 the late answer is dropped: a streamed one is ended, or its rows would wait for good.
      const deliver = (response: ServeResponse) => {
        if (delivered) return streamedBodyOf(response)?.stream.cancel(new ClientClosed())
        delivered = true
        resolve(response)
      }
      deliverInTime(deadlines, serveRequest, pending, deliver, handler.corsHeaders)
    })
  }

  return async (request) => {
    const headers: Record<string, string> = {}
    request.headers.forEach((value, name) => {
      headers[name] = value
    })
    try {
      const response = await answer(request, headers)
      const streamed = streamedBodyOf(response)
      if (streamed !== undefined) return streamedFetchResponse(response, streamed, rowTimeoutMs, request.signal)
      return await toFetchResponse(response, headers)
    } catch (error) {
      const failure = error instanceof PayloadTooLarge ? error : adapterFault(error)
      return toFetchResponse(adapterErrorResponse(failure, headers, handler.corsHeaders), headers)
    }
  }
}
