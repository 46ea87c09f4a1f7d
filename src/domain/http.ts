import type { MaybePromise } from "./maybePromise.js"

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"

type HeaderValue = string | ReadonlyArray<string> | undefined
export type HeaderMap = Readonly<Record<string, HeaderValue>>
export type QueryParams = Record<string, string | Array<string>>

/** A transport-neutral request: what every adapter translates its native request into. */
export interface ServeRequest {
  readonly method: string
  /** Path without the query string, e.g. `/api/analytics/revenue`. */
  readonly path: string
  /** Parsed query string; repeated keys are arrays. */
  readonly query?: QueryParams
  /** Header names in any case: read them with `getHeader`. */
  readonly headers?: HeaderMap
  /** Raw text or bytes from a transport, or an already parsed value from an in-process caller. */
  readonly body?: unknown
  /** Socket address of the peer, when the transport knows it. */
  readonly remoteAddress?: string
  /** Aborts when the client goes away or the request times out. */
  readonly signal?: AbortSignal
  /** The native request object of the adapter, for escape hatches. */
  readonly raw?: unknown
}

/** A transport-neutral response; `body` is already serialized. */
export interface ServeResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | null
  /**
   * Where adapters keep the compressed forms of a body that does not change (docs script, OpenAPI
   * document), so it is compressed once. Absent on answers built per request.
   */
  readonly compressed?: CompressedBodies
}

/**
 * Where a HEAD answer keeps the body its GET would have sent (its own `body` is null): adapters give
 * it the headers that body would get (Content-Length, or the compression headers), and send no body.
 * A symbol, so it is no part of the answer's data.
 */
export const HEAD_OF: unique symbol = Symbol("queryserve.headOf")

/** A ServeResponse as the pipeline answers a HEAD request. */
export interface HeadResponse extends ServeResponse {
  readonly [HEAD_OF]?: string | null
}

/** The content codings adapters compress with. */
export type ContentCoding = "br" | "gzip"

/** Told the bytes of each compressed form an adapter keeps: how a store that holds the body counts them. */
export const ON_KEPT: unique symbol = Symbol("queryserve.onKept")

/** Compressed forms of one body, filled by the adapters on first use. */
export type CompressedBodies = Partial<Record<ContentCoding, Uint8Array | Promise<Uint8Array>>> & {
  [ON_KEPT]?: (bytes: number) => void
}

/** Returns a copy of `headers` with lower-case names; array values are kept. */
export const normalizeHeaderMap = (headers: HeaderMap | undefined): Record<string, string | ReadonlyArray<string>> => {
  const normalized: Record<string, string | ReadonlyArray<string>> = {}
  if (headers === undefined) return normalized
  for (const name of Object.keys(headers)) {
    const value = headers[name]
    if (value !== undefined) normalized[name.toLowerCase()] = value
  }
  return normalized
}

/**
 * The client address behind `trustedHops` proxies: the entry that many places from the right of
 * `X-Forwarded-For`. Each trusted proxy appends the address it saw, so what a client wrote itself
 * stays on the left and is never read. Undefined when the header has no such entry.
 */
export const forwardedAddress = (header: HeaderValue, trustedHops: number): string | undefined => {
  if (trustedHops <= 0 || header === undefined) return undefined
  const hops = (typeof header === "string" ? header : header.join(",")).split(",")
  const hop = hops[Math.max(0, hops.length - trustedHops)]?.trim()
  return hop === undefined || hop.length === 0 ? undefined : hop
}

/** How many proxies a `trustProxy` option trusts: `true` is one. */
export const trustedHopCount = (trustProxy: boolean | number | undefined): number =>
  typeof trustProxy === "number" ? trustProxy : trustProxy === true ? 1 : 0

/**
 * The client address: the one `trustedHops` proxies forwarded (see `forwardedAddress`), else the request's own.
 * Every line of `X-Forwarded-For` is read, not the first alone: the first is the one a client wrote itself.
 */
export const clientAddress = (request: ServeRequest, trustedHops: number): string | undefined =>
  (trustedHops > 0 ? forwardedAddress(getHeaderValue(request, "x-forwarded-for"), trustedHops) : undefined) ?? request.remoteAddress

/**
 * Set on the prototype of the requests adapters build, whose header names are lower-case already:
 * a header read that misses there is final.
 */
export const ADAPTER_HEADERS: unique symbol = Symbol("queryserve.adapterHeaders")

/** Case-insensitive header read; an array value yields its first entry. */
export const getHeader = (request: Pick<ServeRequest, "headers">, name: string): string | undefined => {
  const value = getHeaderValue(request, name)
  return value === undefined || typeof value === "string" ? value : value[0]
}

/** Case-insensitive header read that keeps every line of a header sent more than once (an array value). */
const getHeaderValue = (request: Pick<ServeRequest, "headers">, name: string): HeaderValue => {
  const headers = request.headers
  if (headers === undefined) return undefined
  const lower = name.toLowerCase()
  // Node and fetch adapters already hand over lower-case names: try the fast exact read first.
  let value = headers[lower]
  // A miss in an adapter's map is final; only hand-built requests may spell names otherwise.
  if (value === undefined && (request as { readonly [ADAPTER_HEADERS]?: true })[ADAPTER_HEADERS] !== true) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === lower) {
        value = headers[key]
        break
      }
    }
  }
  return value
}

/** The CORS headers an answer to a request from `origin` carries (undefined: the request named none). */
export type CorsHeaders = (origin: string | undefined) => Readonly<Record<string, string>>

/** The low-level handler every adapter drives. Synchronous when every stage of the request was. */
export interface ServeHandler {
  (request: ServeRequest): MaybePromise<ServeResponse>
  /**
   * The API's CORS headers, when it has `cors`: adapters add them to the answers they make
   * themselves (413, 408, 431, 400 for unparsable HTTP, 503 while draining).
   */
  readonly corsHeaders?: CorsHeaders
}
