import type { QueryParams } from "./http.js"

/**
 * Records without Object.prototype in their chain, so `__proto__` or `constructor` keys are plain
 * data. Unlike `Object.create(null)`, which V8 keeps in slow dictionary mode, objects made by this
 * constructor (whose prototype is a bare null-prototype object) stay fast to create and fill.
 */
const NullPrototypeRecord = function() {} as unknown as new() => Record<string, never>
NullPrototypeRecord.prototype = Object.create(null)

export const emptyRecord = <A>(): Record<string, A> => new NullPrototypeRecord()

const decode = (text: string): string => {
  const spaced = text.includes("+") ? text.replace(/\+/g, " ") : text
  if (!spaced.includes("%")) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    // Malformed percent-encoding is kept verbatim; validation decides whether the value is acceptable.
    return spaced
  }
}

/**
 * Parses `a=1&b=2&b=3` into `{ a: "1", b: ["2", "3"] }`, in one pass over the text (no array of
 * pairs: this runs for every request with a query string).
 * The result inherits nothing, so `__proto__` or `constructor` keys are plain data.
 */
export const parseQueryString = (search: string): QueryParams => {
  const params = emptyRecord<string | Array<string>>()
  const end = search.length
  for (let start = 0; start < end;) {
    let amp = search.indexOf("&", start)
    if (amp === -1) amp = end
    if (amp > start) {
      let eq = search.indexOf("=", start)
      if (eq === -1 || eq > amp) eq = amp
      const key = decode(search.slice(start, eq))
      const value = eq === amp ? "" : decode(search.slice(eq + 1, amp))
      const existing = params[key]
      if (existing === undefined) params[key] = value
      else if (typeof existing === "string") params[key] = [existing, value]
      else existing.push(value)
    }
    start = amp + 1
  }
  return params
}

/** Where the path of an absolute-form target (`http://host/path`) starts: after its authority. */
const afterAuthority = (url: string): number => {
  const scheme = url.indexOf("://")
  if (scheme === -1) return 0
  for (let i = scheme + 3; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) return i
  }
  return url.length
}

/**
 * Splits a request target into its path and the text after `?` ("" without one). Origin-form
 * (`/path?query`) is what clients send; absolute-form (`http://host/path?query`) is what a fetch
 * Request's url holds, and what a server must accept from a client too. A fragment (`#…`) belongs to
 * neither. The text is parsed only when someone reads the request's `query` (see TransportRequest):
 * an input remembered by that text needs no parsing at all.
 */
export const splitUrl = (url: string): { readonly path: string; readonly rawQuery: string } => {
  const start = url.charCodeAt(0) === 47 ? 0 : afterAuthority(url)
  let end = url.indexOf("#", start)
  if (end === -1) end = url.length
  const q = url.indexOf("?", start)
  if (q === -1 || q > end) {
    const path = start === 0 && end === url.length ? url : url.slice(start, end)
    return { path: path === "" ? "/" : path, rawQuery: "" }
  }
  return { path: q === start ? "/" : url.slice(start, q), rawQuery: url.slice(q + 1, end) }
}
