import { getHeader, type QueryParams, type ServeRequest } from "../domain/http.js"
import { TransportRequest } from "../domain/transportRequest.js"
import { bodyText } from "./input.js"
import { canonicalJson } from "../domain/canonicalJson.js"
import { digest } from "../domain/digest.js"
import type { ResultCacheKey } from "./storedResult.js"

/**
 * Most inputs a cached endpoint remembers, and the longest raw text it remembers one by. Each entry
 * holds its raw text, a copy of the value and its key texts: at most about 2 KiB, so at most about
 * 2 MiB per endpoint.
 */
/** Inputs up to this long are kept in the key as text (readable in Redis, no hashing); longer ones are digested. */
const LITERAL_INPUT_MAX = 96

/**
 * The input part of a key: its canonical text (which holds no `:`, so no input can look like a
 * scope to an invalidation pattern), or `#` and a digest of it.
 */
export const inputSegment = (input: string): string => (input.length > LITERAL_INPUT_MAX ? `#${digest(input)}` : input)

const INPUT_MEMO_MAX_ENTRIES = 1_000
const INPUT_MEMO_MAX_RAW = 512

/** An input that passed validation, as a cached endpoint remembers it. */
export interface KnownInput {
  /** The validated value, plain data; every request gets a copy of its own (`copyKnown`). */
  readonly value: unknown
  /** Whether `value` is an object of `Object.prototype` with only texts, numbers and the like in it: a spread copies it. */
  readonly flat: boolean
  /** Its canonical text and the input part of a cache key made from it. */
  readonly canonical: string
  readonly segment: string
  /** The cache keys made from it so far, by tenant id: built and hashed once, not per request. */
  readonly tenantKeys: Map<string, ResultCacheKey>
}

const MAX_DEPTH = 16

/**
 * Whether `value` is plain data that a structural copy reproduces exactly: texts, numbers,
 * booleans, bigints, null and undefined, in arrays and objects (of the plain prototypes, extensible,
 * every own property an enumerable, writable data property with a text name). Dates, class
 * instances, maps, frozen objects and getters are not.
 */
const isPlainData = (value: unknown, depth: number): boolean => {
  if (typeof value !== "object" || value === null) return typeof value !== "function" && typeof value !== "symbol"
  if (depth > MAX_DEPTH || !Object.isExtensible(value) || Object.getOwnPropertySymbols(value).length > 0) return false
  const proto: unknown = Object.getPrototypeOf(value)
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return false
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainData(value[i], depth + 1)) return false
    return Object.getOwnPropertyNames(value).length === value.length + 1
  }
  // A copy would set its prototype instead of an own "__proto__" field.
  if ((proto !== Object.prototype && proto !== null) || Object.hasOwn(value, "__proto__")) return false
  const descriptors = Object.getOwnPropertyDescriptors(value)
  for (const name of Object.keys(descriptors)) {
    const descriptor = descriptors[name]!
    if (!("value" in descriptor) || !descriptor.enumerable || !descriptor.writable || !isPlainData(descriptor.value, depth + 1)) return false
  }
  return true
}

/** A copy of plain data (see `isPlainData`) that shares nothing with it. */
const copyPlain = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    const list: Array<unknown> = new Array(value.length)
    for (let i = 0; i < value.length; i++) list[i] = copyPlain(value[i])
    return list
  }
  const record = value as Readonly<Record<string, unknown>>
  const copy: Record<string, unknown> = Object.getPrototypeOf(value) === null ? Object.create(null) : {}
  for (const key of Object.keys(record)) copy[key] = copyPlain(record[key])
  return copy
}

const isFlatRecord = (value: unknown): boolean =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype &&
  Object.values(value).every((field) => typeof field !== "object" || field === null)

/**
 * A request's own copy of a remembered input. The usual input, a flat record of plain data, is
 * copied with a spread (tens of nanoseconds), not field by field (about half a microsecond).
 */
export const copyKnown = (known: KnownInput): unknown =>
  known.flat ? { ...(known.value as Readonly<Record<string, unknown>>) } : copyPlain(known.value)

/** Query parameters as one text that differs whenever they differ: each name and value prefixed by its length. */
const queryText = (query: QueryParams | undefined): string | undefined => {
  let text = "q"
  if (query === undefined) return text
  for (const name of Object.keys(query)) {
    const value: unknown = query[name]
    text += `${name.length}:${name}`
    if (typeof value === "string") text += `=${value.length}:${value}`
    else if (Array.isArray(value)) {
      text += `*${value.length}`
      for (const item of value as ReadonlyArray<unknown>) {
        if (typeof item !== "string") return undefined
        text += `=${item.length}:${item}`
      }
    } else return undefined
  }
  return text
}

/**
 * The body's text when the input is read from the body (see `readInput`), null when it is read from
 * the query string, undefined when the body is not text (an in-process caller's parsed value).
 */
const bodySource = (request: ServeRequest): string | null | undefined => {
  const method = request.method
  if (method === "GET" || method === "HEAD" || method === "DELETE") return null
  const body = request.body
  if (body === undefined || body === null) return null
  const text = bodyText(body)
  if (text === undefined) return undefined
  return text.trim().length === 0 ? null : text
}

/**
 * The inputs one cached endpoint validated, by the raw text they were read from, so that a request
 * repeating one skips validation (and the canonical text of its cache key). Only successful,
 * synchronous validations of plain data are remembered; the oldest entry goes first. Input schemas
 * of cached endpoints are taken to be pure, as the cache key already requires: the same raw text
 * always gives the same value.
 */
export class InputMemo {
  /** By the query text as the request target carried it (requests of queryserve's adapters): no parsing, no text to build. */
  private readonly byRawQuery = new Map<string, KnownInput>()
  /** By a text built from the parsed query parameters, or from the body and its content type. */
  private readonly byText = new Map<string, KnownInput>()

  get(request: ServeRequest): KnownInput | undefined {
    const body = bodySource(request)
    if (body === null && request instanceof TransportRequest) {
      return request.rawQuery.length <= INPUT_MEMO_MAX_RAW ? this.byRawQuery.get(request.rawQuery) : undefined
    }
    const text = builtText(request, body)
    // A long text is never remembered: not hashed either.
    return text === undefined || text.length > INPUT_MEMO_MAX_RAW ? undefined : this.byText.get(text)
  }

  /** Remembers `value` (a copy of it) for the request's input text; undefined when it cannot be (not plain data, no canonical text, too long a text). */
  remember(request: ServeRequest, value: unknown): KnownInput | undefined {
    const body = bodySource(request)
    const byRawQuery = body === null && request instanceof TransportRequest
    const text = byRawQuery ? request.rawQuery : builtText(request, body)
    if (text === undefined || text.length > INPUT_MEMO_MAX_RAW || !isPlainData(value, 0)) return undefined
    let canonical: string
    try {
      canonical = canonicalJson(value)
    } catch {
      return undefined
    }
    const kept = copyPlain(value)
    const known: KnownInput = { value: kept, flat: isFlatRecord(kept), canonical, segment: inputSegment(canonical), tenantKeys: new Map() }
    const map = byRawQuery ? this.byRawQuery : this.byText
    if (map.size >= INPUT_MEMO_MAX_ENTRIES) map.delete(map.keys().next().value!)
    map.set(text, known)
    return known
  }
}

/** The input's text built from the parsed query parameters, or from the body and its content type. */
const builtText = (request: ServeRequest, body: string | null | undefined): string | undefined => {
  if (body === undefined) return undefined
  if (body === null) return queryText(request.query)
  const contentType = getHeader(request, "content-type")
  // A missing Content-Type (JSON) and an empty one (refused) are read differently: `b:` holds no length.
  return contentType === undefined ? `b:${body}` : `b${contentType.length}:${contentType}${body}`
}
