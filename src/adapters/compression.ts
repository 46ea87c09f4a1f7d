/**
 * Response compression, the part both adapters share: which content coding a request accepts and
 * which answers are worth compressing. Pure (no `node:` module): the fetch adapter runs on any
 * runtime with Web standards; each adapter brings its own codec.
 */
import type { CompressedBodies, ContentCoding, ServeResponse } from "../domain/http.js"

export type { CompressedBodies, ContentCoding }

/** Answers up to this many bytes go out as they are: compressing them saves less than it costs. */
export const MIN_COMPRESSED_BYTES = 1024

/** The codings queryserve produces, most preferred first at equal q (brotli is smaller). */
const PREFERENCE: ReadonlyArray<ContentCoding> = ["br", "gzip"]

const qualityOf = (parameters: ReadonlyArray<string>): number => {
  for (const parameter of parameters) {
    const eq = parameter.indexOf("=")
    if (eq !== -1 && parameter.slice(0, eq).trim().toLowerCase() === "q") {
      const q = Number(parameter.slice(eq + 1).trim())
      return Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0
    }
  }
  return 1
}

/**
 * The coding to answer with, per RFC 9110 12.5.3: the highest q among `available` (a coding not
 * named takes the q of `*`, else 0), brotli before gzip at equal q; undefined for identity. No
 * header means identity, as does `identity;q=0` with nothing else acceptable (answering 406 instead
 * would help no client).
 */
export const negotiateEncoding = (acceptEncoding: string | undefined, available: ReadonlyArray<ContentCoding>): ContentCoding | undefined => {
  if (acceptEncoding === undefined || acceptEncoding.length === 0 || available.length === 0) return undefined
  const named = new Map<string, number>()
  for (const range of acceptEncoding.split(",")) {
    const [coding = "", ...parameters] = range.split(";")
    const name = coding.trim().toLowerCase()
    if (name.length > 0) named.set(name === "x-gzip" ? "gzip" : name, qualityOf(parameters))
  }
  const wildcard = named.get("*") ?? 0
  let best: ContentCoding | undefined
  let bestQuality = 0
  for (const coding of PREFERENCE) {
    if (!available.includes(coding)) continue
    const quality = named.get(coding) ?? wildcard
    if (quality > bestQuality) {
      best = coding
      bestQuality = quality
    }
  }
  return best
}

// Text formats: what queryserve produces (JSON, CSV, NDJSON, HTML, JavaScript) and their relatives.
const TEXTUAL = /^(?:text\/|application\/(?:json|x-ndjson|javascript|xml|[^;]*\+(?:json|xml))\b)/i

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i

/**
 * Whether an answer is of a kind that gets compressed when the client allows it: a text body with
 * content (not 204/304), not encoded already, not marked `no-transform`. Its size is checked apart.
 */
export const compressible = (response: ServeResponse): boolean => {
  const { status, headers } = response
  if (response.body === null || status < 200 || status === 204 || status === 206 || status === 304) return false
  if (headers["content-encoding"] !== undefined) return false
  const contentType = headers["content-type"]
  if (contentType === undefined || !TEXTUAL.test(contentType)) return false
  const cacheControl = headers["cache-control"]
  return cacheControl === undefined || !NO_TRANSFORM.test(cacheControl)
}

const addVary = (headers: Record<string, string>): void => {
  const vary = headers.vary
  if (vary === undefined) headers.vary = "Accept-Encoding"
  else if (!/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(vary)) headers.vary = `${vary}, Accept-Encoding`
}

const weaken = (etag: string | undefined): string | undefined => (etag === undefined || etag.startsWith("W/") ? etag : `W/${etag}`)

/**
 * Headers of an answer that may be compressed: it varies on Accept-Encoding whether or not this one
 * is (a shared cache must not hand a compressed copy to a client that cannot read it). When `coding`
 * is set, it names it, and the ETag becomes weak: the compressed bytes differ from those the strong
 * tag names, and If-None-Match compares weakly, so either copy still revalidates (RFC 9110 8.8.1).
 */
export const encodingHeaders = (headers: Record<string, string>, coding: ContentCoding | undefined): Record<string, string> => {
  addVary(headers)
  if (coding === undefined) return headers
  headers["content-encoding"] = coding
  const etag = weaken(headers.etag)
  if (etag !== undefined) headers.etag = etag
  delete headers["content-length"]
  return headers
}

/**
 * A 304 names the ETag of the copy the client holds: weak when If-None-Match sent the weak tag of a
 * compressed copy, together with the Vary that copy came with.
 */
export const notModifiedHeaders = (headers: Record<string, string>, ifNoneMatch: string | undefined): Record<string, string> => {
  const etag = headers.etag
  if (etag === undefined || ifNoneMatch === undefined || etag.startsWith("W/") || !ifNoneMatch.includes(`W/${etag}`)) return headers
  headers.etag = `W/${etag}`
  addVary(headers)
  return headers
}

/**
 * The headers of a HEAD answer: those the GET's body (`bytes` long) would get, the compression the
 * client would be sent (else, with `length`, its Content-Length), so that the two agree (RFC 9110
 * 9.3.2); no body is sent. Fetch runtimes set a response's length from its body themselves, and
 * may refuse one that does not match the (absent) body: the fetch handler sends none.
 */
export const headHeaders = (
  response: ServeResponse,
  body: string,
  bytes: number,
  acceptEncoding: string | undefined,
  available: ReadonlyArray<ContentCoding>,
  length: boolean
): Record<string, string> => {
  const headers = response.headers
  if (bytes > MIN_COMPRESSED_BYTES && compressible({ status: response.status, headers, body })) {
    const coding = negotiateEncoding(acceptEncoding, available)
    if (coding !== undefined) return encodingHeaders(headers, coding)
    encodingHeaders(headers, undefined)
  }
  if (length) headers["content-length"] = String(bytes)
  return headers
}
