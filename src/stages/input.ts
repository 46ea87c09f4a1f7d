import type { QueryParams, ServeRequest } from "../domain/http.js"
import { getHeader } from "../domain/http.js"
import { ValidationError } from "../domain/errors.js"
import { emptyRecord, parseQueryString } from "../domain/queryString.js"

const dropPrototypeKeys = (key: string, value: unknown): unknown => (key === "__proto__" ? undefined : value)

/**
 * Deepest accepted nesting of a JSON body. Validators, their error messages and handlers walk input
 * recursively: a body 10,000 levels deep would overflow their stack and answer 500 instead of 400.
 */
const MAX_JSON_DEPTH = 512

/** Whether arrays and objects in `text` nest deeper than MAX_JSON_DEPTH; brackets inside strings do not count. */
const nestsTooDeep = (text: string): boolean => {
  // Each level takes at least two characters: shorter texts cannot get there.
  if (text.length <= 2 * MAX_JSON_DEPTH) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 0x5c /* \ */) i++
      else if (code === 0x22 /* " */) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b /* [ */ || code === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) return true
    } else if (code === 0x5d /* ] */ || code === 0x7d /* } */) depth--
  }
  return false
}

/** Refuses JSON text whose arrays and objects nest deeper than MAX_JSON_DEPTH (400, before parsing it). */
export const assertNestingDepth = (text: string): void => {
  if (nestsTooDeep(text)) {
    throw new ValidationError({
      message: "Request body is nested too deeply",
      issues: [{ path: ["body"], message: `Arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep` }]
    })
  }
}

/** `JSON.parse` whose objects never get a `__proto__` key; throws SyntaxError on malformed text. */
export const parseJsonText = (text: string): unknown =>
  // The reviver is slow; only pay for it when a body could smuggle a prototype key, spelled out or
  // with escapes (`"\u005f_proto__"` is the same key).
  text.includes("__proto__") || text.includes("\\u") ? JSON.parse(text, dropPrototypeKeys) : JSON.parse(text)

const parseJson = (text: string): unknown => {
  assertNestingDepth(text)
  try {
    return parseJsonText(text)
  } catch (error) {
    throw new ValidationError({
      message: "Request body is not valid JSON",
      issues: [{ path: ["body"], message: error instanceof Error ? error.message : "Malformed JSON" }]
    })
  }
}

const decoder = new TextDecoder()
/**
 * A transport's body as text (node gives a string, fetch bytes); undefined for anything else. A
 * leading byte order mark is dropped, as TextDecoder drops it from bytes: the same body reads the
 * same through every adapter.
 */
export const bodyText = (body: unknown): string | undefined => {
  if (typeof body === "string") return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body
  if (body instanceof Uint8Array) return decoder.decode(body)
  return undefined
}

const emptyQuery = (): QueryParams => emptyRecord()

/** The media type of a lower-cased Content-Type, without its parameters: `application/json; charset=utf-8` → `application/json`. */
const mediaTypeOf = (contentType: string): string => {
  const semicolon = contentType.indexOf(";")
  return semicolon === -1 ? contentType : contentType.slice(0, semicolon).trimEnd()
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/

/**
 * Bodies are read as UTF-8 (JSON's only encoding); one declared in another charset would be read
 * wrongly without a word (`é` in Latin-1 becomes U+FFFD): refused instead.
 */
const assertUtf8 = (contentType: string): void => {
  const charset = CHARSET.exec(contentType)?.[1]
  if (charset === undefined || charset === "utf-8" || charset === "utf8") return
  throw new ValidationError({
    message: `Unsupported charset "${charset}": send the body in UTF-8`,
    issues: [{ path: ["body"], message: "Unsupported charset" }]
  })
}

/**
 * Where an endpoint's input comes from: the query string for GET/HEAD/DELETE, the body otherwise
 * (JSON or form-encoded; an empty body falls back to the query string). Query-string and form
 * values are all text: `coerce` turns them into what the input schema expects.
 */
export const readInput = (method: string, request: ServeRequest, coerce: (params: QueryParams) => unknown): unknown => {
  if (method === "GET" || method === "HEAD" || method === "DELETE") return coerce(request.query ?? emptyQuery())
  const body = request.body
  const text = bodyText(body)
  if (text === undefined) return body === undefined || body === null ? coerce(request.query ?? emptyQuery()) : body
  if (text.trim().length === 0) return coerce(request.query ?? emptyQuery())
  // Media types are case-insensitive; parameters (charset) and spaces around them do not matter.
  const contentType = getHeader(request, "content-type")?.trim().toLowerCase()
  const mediaType = contentType === undefined ? undefined : mediaTypeOf(contentType)
  if (contentType !== undefined && mediaType !== contentType) assertUtf8(contentType)
  if (mediaType === undefined || mediaType === "application/json" || mediaType.endsWith("+json")) return parseJson(text)
  if (mediaType === "application/x-www-form-urlencoded") return coerce(parseQueryString(text))
  throw new ValidationError({
    message: `Unsupported content type "${contentType}": send application/json or application/x-www-form-urlencoded`,
    issues: [{ path: ["body"], message: "Unsupported content type" }]
  })
}
