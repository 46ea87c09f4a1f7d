import { type IncomingHttpHeaders, type ServerResponse, STATUS_CODES } from "node:http"
import {
  type BrotliOptions,
  brotliCompress,
  brotliCompressSync,
  constants,
  gzip,
  gzipSync,
  type InputType,
  type ZlibOptions
} from "node:zlib"
import { ClientClosed } from "../domain/clientClosed.js"
import { InternalError } from "../domain/errors.js"
import { pumpRows, type StreamedBody } from "../stages/rowStream.js"
import { type ContentCoding, type CorsHeaders, HEAD_OF, type HeadResponse, ON_KEPT, type ServeResponse } from "../domain/http.js"
import { compressible, encodingHeaders, headHeaders, MIN_COMPRESSED_BYTES, negotiateEncoding, notModifiedHeaders } from "./compression.js"
import { adapterErrorResponse } from "./transport.js"
import { closeUnlessRead, closeUnlessTaken } from "./nodeConnection.js"

const CODINGS: ReadonlyArray<ContentCoding> = ["br", "gzip"]

// Brotli 5 is about as fast as gzip 6 and a third smaller on JSON and CSV (a 1.1 MB export: 68 KB
// against 121 KB, ~20 ms either way); higher levels cost several times more for a few percent.
const BROTLI: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }
const GZIP: ZlibOptions = { level: 6 }

// Up to here compressing takes well under a millisecond: done in place. Larger bodies are compressed
// in libuv's thread pool, so one big export does not hold up every other request.
const SYNC_LIMIT = 64 * 1024

const compressNow = (input: InputType, coding: ContentCoding): Uint8Array =>
  coding === "br" ? brotliCompressSync(input, BROTLI) : gzipSync(input, GZIP)

const compressLater = (input: InputType, coding: ContentCoding): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const done = (error: Error | null, output: Uint8Array) => (error === null ? resolve(output) : reject(error))
    if (coding === "br") brotliCompress(input, BROTLI, done)
    else gzip(input, GZIP, done)
  })

/**
 * The body in `coding`: kept on the response's `compressed` when it has one (a static body, a cached
 * entry), so such a body is compressed once; whoever holds the body is told the bytes kept (`ON_KEPT`).
 */
const compressedBody = (response: ServeResponse, body: string, bytes: number, coding: ContentCoding): Uint8Array | Promise<Uint8Array> => {
  const forms = response.compressed
  const kept = forms?.[coding]
  if (kept !== undefined) return kept
  if (forms === undefined) return bytes <= SYNC_LIMIT ? compressNow(body, coding) : compressLater(body, coding)
  // zlib's output is often a view of a larger buffer (16 KiB behind a few hundred bytes), which a
  // kept view would hold for as long as the body: keep a copy of its own size.
  const keep = (output: Uint8Array): Uint8Array => {
    const copy = new Uint8Array(output)
    forms[ON_KEPT]?.(copy.byteLength)
    return copy
  }
  const output = bytes <= SYNC_LIMIT ? keep(compressNow(body, coding)) : compressLater(body, coding).then(keep)
  forms[coding] = output
  return output
}

const finish = (
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array | null,
  cors: CorsHeaders | undefined
): void => {
  if (!headWritten(res, status, headers, cors)) return
  res.end(body ?? undefined)
}

/**
 * Writes the head; false when node:http refused it (a ServeHttpError with status 99, a CR or LF a
 * handler put into ctx.setHeader): thrown here, that would end the process. It is a 500 instead.
 */
const headWritten = (res: ServerResponse, status: number, headers: Record<string, string>, cors: CorsHeaders | undefined): boolean => {
  try {
    res.writeHead(status, headers)
    return true
  } catch (error) {
    console.error("[queryserve] node:http refused the response; answering 500 instead", error)
    const fallback = adapterErrorResponse(new InternalError({ cause: error }), requestHeaders(res), cors)
    // The refused attempt already set a status message; name the 500 explicitly.
    res.writeHead(fallback.status, STATUS_CODES[fallback.status], fallback.headers)
    res.end(fallback.body)
    return false
  }
}

/**
 * The request's headers as node:http links them to its response. A serverless shim's stand-in
 * response may have no `req`: it is then answered as to a client that asked for nothing special.
 */
const requestHeaders = (res: ServerResponse): IncomingHttpHeaders => (res.req as ServerResponse["req"] | undefined)?.headers ?? {}

const acceptEncoding = (res: ServerResponse): string | undefined => {
  const header = requestHeaders(res)["accept-encoding"]
  return Array.isArray(header) ? header.join(",") : header
}

/** Sends a compressible body of `bytes` bytes in the coding the client prefers, or as it is. */
const writeCompressible = (
  res: ServerResponse,
  response: ServeResponse,
  body: string,
  bytes: number,
  cors: CorsHeaders | undefined
): void => {
  const { status, headers } = response
  const coding = negotiateEncoding(acceptEncoding(res), CODINGS)
  const identity = () => {
    headers["content-length"] = String(bytes)
    finish(res, status, encodingHeaders(headers, undefined), body, cors)
  }
  if (coding === undefined) return identity()
  const send = (output: Uint8Array) => {
    if (res.destroyed) return
    const encoded = encodingHeaders(headers, coding)
    encoded["content-length"] = String(output.byteLength)
    finish(res, status, encoded, output, cors)
  }
  let output: Uint8Array | Promise<Uint8Array>
  try {
    output = compressedBody(response, body, bytes, coding)
  } catch (error) {
    console.error("[queryserve] compression failed; answering uncompressed", error)
    return identity()
  }
  if (!(output instanceof Promise)) return send(output)
  output.then(send, (error: unknown) => {
    console.error("[queryserve] compression failed; answering uncompressed", error)
    if (response.compressed?.[coding] === output) delete response.compressed[coding]
    if (!res.destroyed) identity()
  })
}

/**
 * Writes one response: status, headers and body, with a Content-Length (without one node:http
 * answers chunked). Text bodies over 1 KiB are compressed when Accept-Encoding allows; smaller ones
 * pay nothing beyond the length they needed anyway. The pipeline builds a fresh header object per
 * response, so it is completed in place. `cors` goes on the 500 that replaces a response node:http refuses.
 */
export const writeResponse = (res: ServerResponse, response: ServeResponse, close: boolean, cors: CorsHeaders | undefined): void => {
  if (close) res.setHeader("connection", "close")
  const body = response.body
  if (body !== null) {
    const bytes = Buffer.byteLength(body)
    if (bytes > MIN_COMPRESSED_BYTES && compressible(response)) return writeCompressible(res, response, body, bytes, cors)
    response.headers["content-length"] = String(bytes)
  } else if (response.status === 304) {
    notModifiedHeaders(response.headers, requestHeaders(res)["if-none-match"])
  } else {
    const omitted = (response as HeadResponse)[HEAD_OF]
    if (typeof omitted === "string") {
      return finish(res, response.status, headHeaders(response, omitted, Buffer.byteLength(omitted), acceptEncoding(res), CODINGS, true), null, cors)
    }
  }
  finish(res, response.status, response.headers, body, cors)
}

/**
 * Writes a streamed answer: the head at once, then the rows chunked as the socket takes them (a row
 * is pulled only after the last write drained). A client that leaves cancels the stream; a stream
 * that fails after its head was sent destroys the connection, so the client sees a cut transfer
 * (no final chunk), never a complete-looking answer. `done` runs once the answer ended either way.
 * `rowTimeoutMs` bounds the wait for each row (and, in the pump, for the socket to take each full
 * chunk); a part the socket has to hold must be taken within `responseTimeoutMs`, as a buffered answer must.
 */
export const writeStreamed = (
  res: ServerResponse,
  response: ServeResponse,
  streamed: StreamedBody,
  close: boolean,
  cors: CorsHeaders | undefined,
  timeouts: { readonly rowTimeoutMs: number; readonly responseTimeoutMs: number },
  done: () => void
): void => {
  const { stream } = streamed
  if (close) res.setHeader("connection", "close")
  if (!headWritten(res, response.status, response.headers, cors)) {
    stream.cancel(new InternalError({ cause: new Error("node:http refused the response head") }))
    return done()
  }
  // The head goes out now, not with the first chunk: the client learns of the answer while rows are gathered.
  res.flushHeaders()
  let resume: (() => void) | undefined
  const wake = () => {
    const waiting = resume
    resume = undefined
    waiting?.()
  }
  res.on("drain", wake)
  stream.onEnd(wake)
  res.on("close", () => {
    if (!res.writableFinished) stream.cancel(new ClientClosed())
    wake()
  })
  const write = (chunk: string): Promise<void> | undefined => {
    if (res.destroyed || res.write(chunk)) return undefined
    closeUnlessTaken(res, timeouts.responseTimeoutMs, "drain")
    return new Promise<void>((resolve) => (resume = resolve))
  }
  pumpRows(streamed, write, timeouts.rowTimeoutMs).then(
    () => {
      res.end()
      closeUnlessRead(res, timeouts.responseTimeoutMs)
      done()
    },
    () => {
      res.destroy()
      done()
    }
  )
}
