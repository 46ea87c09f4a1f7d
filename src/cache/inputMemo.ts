import { getHeader, type QueryParams, type ServeRequest } from "../domain/http.js"
import { bodyText } from "../pipeline/input.js"
import { canonicalJson, inputSegment } from "./cacheKey.js"
import type { ResultCacheKey } from "./ResultCacheStore.js"

/**
 * Most inputs a cached endpoint remembers, and the longest raw text it remembers one by. Each entry
 * holds its raw text, a copy of the value and its key texts: at most about 2 KiB, so at most about
 * 2 MiB per endpoint.
 */
export const INPUT_MEMO_MAX_ENTRIES = 1_000
export const INPUT_MEMO_MAX_RAW = 512

/** An input that passed validation, as a cached endpoint remembers it. */
export interface KnownInput {
  /** The validated value, plain data; every request gets a copy of its own (`copyPlain`). */
  readonly value: unknown
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
export const copyPlain = (value: unknown): unknown => {
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
 * Everything the input of a request is read from (see `readInput`), as one text: the query
 * parameters, or the body with its content type. Undefined when the body is not text (an in-process
 * caller's parsed value): such a request is not remembered.
 */
const rawInputText = (request: ServeRequest): string | undefined => {
  const method = request.method
  if (method === "GET" || method === "HEAD" || method === "DELETE") return queryText(request.query)
  const body = request.body
  if (body === undefined || body === null) return queryText(request.query)
  const text = bodyText(body)
  if (text === undefined) return undefined
  if (text.trim().length === 0) return queryText(request.query)
  const contentType = getHeader(request, "content-type") ?? ""
  return `b${contentType.length}:${contentType}${text}`
}

/**
 * The inputs one cached endpoint validated, by the raw text they were read from, so that a request
 * repeating one skips validation (and the canonical text of its cache key). Only successful,
 * synchronous validations of plain data are remembered; the oldest entry goes first. Input schemas
 * of cached endpoints are taken to be pure, as the cache key already requires: the same raw text
 * always gives the same value.
 */
export class InputMemo {
  private readonly known = new Map<string, KnownInput>()

  /** The request's raw input text, when short enough to be remembered by. */
  rawText(request: ServeRequest): string | undefined {
    const text = rawInputText(request)
    return text !== undefined && text.length <= INPUT_MEMO_MAX_RAW ? text : undefined
  }

  get(raw: string): KnownInput | undefined {
    return this.known.get(raw)
  }

  /** Remembers `value` (a copy of it) for `raw`; undefined when it cannot be (not plain data, no canonical text). */
  remember(raw: string, value: unknown): KnownInput | undefined {
    if (!isPlainData(value, 0)) return undefined
    let canonical: string
    try {
      canonical = canonicalJson(value)
    } catch {
      return undefined
    }
    const known: KnownInput = { value: copyPlain(value), canonical, segment: inputSegment(canonical), tenantKeys: new Map() }
    if (this.known.size >= INPUT_MEMO_MAX_ENTRIES) this.known.delete(this.known.keys().next().value!)
    this.known.set(raw, known)
    return known
  }
}
