import type { IncomingMessage, ServerResponse } from "node:http"
import { toErrorResponse } from "../domain/envelope.js"
import { InternalError, PayloadTooLarge, type ServeError } from "../domain/errors.js"
import type { ServeRequest, ServeResponse, ServeHandler } from "../domain/http.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { splitUrl } from "../domain/queryString.js"

export interface NodeHandlerOptions {
  /** Largest accepted request body in bytes (default 1 MiB); larger ones get 413 without being buffered. */
  readonly bodyLimit?: number
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024

const writeResponse = (res: ServerResponse, response: ServeResponse): void => {
  if (res.headersSent) return
  res.writeHead(response.status, response.headers)
  res.end(response.body ?? undefined)
}

const writeError = (res: ServerResponse, error: ServeError): void => {
  const { status, headers, envelope } = toErrorResponse(error)
  writeResponse(res, { status, headers: { ...headers, "content-type": "application/json; charset=utf-8" }, body: JSON.stringify(envelope) })
}

const hasBody = (req: IncomingMessage): boolean =>
  req.method !== "GET" && req.method !== "HEAD" &&
  (req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined)

/** Reads the body as text, refusing more than `limit` bytes by Content-Length or while streaming. */
const readBody = (req: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const tooLarge = () => new PayloadTooLarge({ message: `Request body exceeds ${limit} bytes`, limitBytes: limit })
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) return reject(tooLarge())
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        req.removeAllListeners("data")
        req.resume()
        reject(tooLarge())
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const toServeRequest = (req: IncomingMessage, body: string | undefined): ServeRequest => {
  const { path, query } = splitUrl(req.url ?? "/")
  return {
    method: req.method ?? "GET",
    path,
    query,
    headers: req.headers,
    body,
    remoteAddress: req.socket.remoteAddress,
    raw: req
  }
}

/** A Node `(req, res)` listener over a ServeHandler; it only translates between the two. */
export const createNodeHandler = (handler: ServeHandler, options: NodeHandlerOptions = {}) => {
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const dispatch = (res: ServerResponse, request: ServeRequest): void => {
    try {
      const response = handler(request)
      if (isPromiseLike(response)) {
        response.then((r) => writeResponse(res, r), (error: unknown) => writeError(res, new InternalError({ cause: error })))
      } else writeResponse(res, response)
    } catch (error) {
      writeError(res, new InternalError({ cause: error }))
    }
  }
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (!hasBody(req)) return dispatch(res, toServeRequest(req, undefined))
    readBody(req, limit).then(
      (body) => dispatch(res, toServeRequest(req, body)),
      (error: unknown) => writeError(res, error instanceof PayloadTooLarge ? error : new InternalError({ cause: error }))
    )
  }
}
