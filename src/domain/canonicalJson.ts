import { emptyRecord } from "./queryString.js"

const MAX_DEPTH = 64

/** The prototype of parsed query strings and coerced parameters: bare, so their own fields are all they hold. */
const RECORD_PROTOTYPE: unknown = Object.getPrototypeOf(emptyRecord())

const writeList = (values: ReadonlyArray<unknown>, depth: number): string => {
  let out = ""
  for (let i = 0; i < values.length; i++) out += (i === 0 ? "" : ",") + write(values[i], depth + 1)
  return out
}

/** Texts JSON writes as they are between quotes (no quote, backslash, control character or surrogate), and holding no `:`. */
const PLAIN_TEXT = /^[^"\\\u0000-\u001f:\ud800-\udfff]*$/

/** A JSON string literal with `:` written as its escape `\u003a`: canonical texts hold no `:`, so a key's parts never run into each other. */
const quote = (text: string): string => {
  if (PLAIN_TEXT.test(text)) return `"${text}"`
  const literal = JSON.stringify(text)
  return literal.includes(":") ? literal.replaceAll(":", "\\u003a") : literal
}

/** The keys of `record` in sorted order; sorted already in the usual case (a decoded input of sorted fields), then not sorted again. */
const sortedKeys = (record: object): Array<string> => {
  const keys = Object.keys(record)
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return keys.sort()
  return keys
}

const HIDDEN_STATE = "the value holds state its text cannot show (a function, a symbol, a hidden field) and cannot be part of a cache key"

const writeObject = (value: object, depth: number): string => {
  const record = value as Readonly<Record<string, unknown>>
  const keys = sortedKeys(record)
  // Symbol-keyed and non-enumerable fields are not in the text: two callers could differ only there.
  if (Reflect.ownKeys(record).length !== keys.length) throw new TypeError(HIDDEN_STATE)
  let out = "{"
  let first = true
  for (const key of keys) {
    const field = record[key]
    // As in JSON: an undefined field is no field.
    if (field === undefined) continue
    out += `${first ? "" : ","}${quote(key)}=${write(field, depth + 1)}`
    first = false
  }
  return `${out}}`
}

const write = (value: unknown, depth: number): string => {
  switch (typeof value) {
    case "string":
      return quote(value)
    case "number":
      // NaN, Infinity and -0 stay distinct from null and 0 (JSON would merge them).
      return Object.is(value, -0) ? "-0" : String(value)
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      return `${value}n`
    case "object": {
      if (value === null) return "null"
      if (depth > MAX_DEPTH) throw new RangeError("the value is nested too deeply to be part of a cache key")
      const proto: unknown = Object.getPrototypeOf(value)
      if (proto === Object.prototype || proto === null || proto === RECORD_PROTOTYPE) return writeObject(value, depth)
      // Subclasses are not these: they may hold more than the elements or the time.
      if (proto === Array.prototype && Array.isArray(value)) return `[${writeList(value, depth)}]`
      if (proto === Date.prototype) return `Date(${(value as Date).getTime()})`
      if (proto === Map.prototype) {
        const entries = [...(value as Map<unknown, unknown>)].map(([k, v]) => `${write(k, depth + 1)}=>${write(v, depth + 1)}`).sort()
        return `Map[${entries.join(",")}]`
      }
      if (proto === Set.prototype) return `Set[${[...(value as Set<unknown>)].map((v) => write(v, depth + 1)).sort().join(",")}]`
      // Any other object may hold state its fields or toJSON do not show (Redacted, #private fields):
      // two different values would get one text, and one caller another's entry.
      throw new TypeError("the value holds an object that is not plain data and cannot be part of a cache key")
    }
    case "undefined":
      return "undefined"
    default:
      // A function's or symbol's text would be the same for all of them (a closure over a user id).
      throw new TypeError(HIDDEN_STATE)
  }
}

/**
 * A text of `value` that is the same for equal values whatever the order of their keys, and
 * different for different ones: JSON-like (`{"key"=value}`), with sorted keys, without any `:`,
 * and with the values JSON would merge kept apart (NaN and null, -0 and 0, a bigint and a number,
 * a Date and its ISO text). Throws for values nested deeper than 64 levels (a cycle) and for
 * objects other than plain objects (of Object.prototype, of null, or a parsed query string), arrays,
 * Dates, Maps and Sets (not their subclasses), and for functions, symbols and symbol-keyed or
 * non-enumerable fields, whose text could not tell two values apart (a Redacted, a class with
 * #private fields, a closure over a user id): such a request is not cached.
 */
export const canonicalJson = (value: unknown): string => write(value, 0)
