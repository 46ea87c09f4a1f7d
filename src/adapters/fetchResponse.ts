import { ClientClosed } from "../domain/clientClosed.js"
import { readableRows, type StreamedBody } from "../stages/rowStream.js"
import { type ContentCoding, HEAD_OF, type HeadResponse, type ServeResponse } from "../domain/http.js"
import { compressible, encodingHeaders, headHeaders, MIN_COMPRESSED_BYTES, negotiateEncoding, notModifiedHeaders } from "./compression.js"

const supports = (coding: ContentCoding): boolean => {
  if (typeof CompressionStream !== "function") return false
  try {
    new CompressionStream(coding as CompressionFormat)
    return true
  } catch {
    return false
  }
}

let available: ReadonlyArray<ContentCoding> | undefined

/** What this runtime's CompressionStream produces: gzip on every runtime, brotli where it has it. */
const codings = (): ReadonlyArray<ContentCoding> => (available ??= (["br", "gzip"] as const).filter(supports))

const encoder = new TextEncoder()

const compressedStream = (bytes: Uint8Array<ArrayBuffer>, coding: ContentCoding): ReadableStream<Uint8Array> =>
  new Response(bytes).body!.pipeThrough(new CompressionStream(coding as CompressionFormat))

/**
 * The init of a response whose body is already compressed. workerd encodes a body itself, by its
 * Content-Encoding header, unless told it is encoded already ("manual"); without this a Worker would
 * send it compressed twice. Other runtimes ignore the field.
 */
interface EncodedResponseInit extends ResponseInit {
  readonly encodeBody: "manual"
}

const encoded = (status: number, headers: Record<string, string>): EncodedResponseInit => ({ status, headers, encodeBody: "manual" })

const collect = (stream: ReadableStream<Uint8Array>): Promise<Uint8Array> =>
  new Response(stream).arrayBuffer().then((buffer) => new Uint8Array(buffer))

/**
 * A ServeResponse as a fetch Response. Text bodies over 1 KiB are compressed with CompressionStream
 * when Accept-Encoding allows: streamed as they are produced, or, for a body that does not change
 * (docs script, OpenAPI document), compressed once and kept.
 */
export const toFetchResponse = (response: ServeResponse, requestHeaders: Readonly<Record<string, string>>): Response | Promise<Response> => {
  const { status, headers, body } = response
  const omitted = (response as HeadResponse)[HEAD_OF]
  if (typeof omitted === "string") {
    const bytes = encoder.encode(omitted).byteLength
    return new Response(null, { status, headers: headHeaders(response, omitted, bytes, requestHeaders["accept-encoding"], codings(), false) })
  }
  // A UTF-16 unit takes at most 3 bytes in UTF-8: shorter bodies cannot pass the threshold.
  if (body === null || body.length * 3 <= MIN_COMPRESSED_BYTES || !compressible(response)) {
    if (status === 304) notModifiedHeaders(headers, requestHeaders["if-none-match"])
    return new Response(body, { status, headers })
  }
  const bytes = encoder.encode(body)
  if (bytes.byteLength <= MIN_COMPRESSED_BYTES) return new Response(bytes, { status, headers })
  const coding = negotiateEncoding(requestHeaders["accept-encoding"], codings())
  if (coding === undefined) return new Response(bytes, { status, headers: encodingHeaders(headers, undefined) })
  const kept = response.compressed
  if (kept === undefined) return new Response(compressedStream(bytes, coding), encoded(status, encodingHeaders(headers, coding)))
  return Promise.resolve((kept[coding] ??= collect(compressedStream(bytes, coding)))).then(
    (output) => {
      const withCoding = encodingHeaders(headers, coding)
      withCoding["content-length"] = String(output.byteLength)
      // Node's zlib fills `compressed` with Buffers over a shared ArrayBuffer pool: valid bodies all the same.
      return new Response(output as Uint8Array<ArrayBuffer>, encoded(status, withCoding))
    },
    (error: unknown) => {
      console.error("[queryserve] compression failed; answering uncompressed", error)
      delete kept[coding]
      return new Response(bytes, { status, headers: encodingHeaders(headers, undefined) })
    }
  )
}

/**
 * A streamed answer as a fetch Response whose body pulls rows as its reader takes chunks. The client
 * leaving (`signal`, the Request's) or cancelling the body cancels the stream; a stream that fails
 * after the head errors the body, so the transfer is cut.
 */
export const streamedFetchResponse = (response: ServeResponse, streamed: StreamedBody, timeoutMs: number, signal: AbortSignal): Response => {
  const { stream } = streamed
  const leave = () => stream.cancel(new ClientClosed())
  signal.addEventListener("abort", leave, { once: true })
  stream.onEnd(() => signal.removeEventListener("abort", leave))
  return new Response(readableRows(streamed, timeoutMs), { status: response.status, headers: response.headers })
}
