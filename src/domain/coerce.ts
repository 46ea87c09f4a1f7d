import type { QueryParams } from "./http.js"
import { arrayItemsOf, type JsonSchema, objectProperties, otherPropertiesOf, type PropertyShape, stringLiteralsOf, typesOf } from "./jsonSchema.js"
import { emptyRecord } from "./queryString.js"

/**
 * Query strings and form bodies carry only strings. A Coercion turns them into the numbers,
 * booleans, nulls and arrays the input's JSON Schema asks for, as ajv's `coerceTypes` does.
 * Text that does not parse stays text, so validation reports it with the property's path.
 */
export type Coercion = (params: QueryParams) => Record<string, unknown>

type ValueCoercion = (text: string) => unknown
/** Coerces the list item at `index`: a tuple's positions each have their own schema. */
type ItemCoercion = (text: string, index: number) => unknown
type ParamCoercion = (value: string | ReadonlyArray<string>) => unknown
/** The coercion for a key the schema does not name; undefined leaves its value as it is. */
type KeyCoercion = (name: string) => ParamCoercion | undefined

// Plain decimal notation only: `Number()` would also accept "", " 1 ", "0x10" and "Infinity".
// Each digit can be matched one way only: `\d+\.?\d*` could split a run of digits anywhere, and a
// long run followed by a letter took time quadratic in its length (minutes for a 1 MiB form body).
const NUMERIC = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

const scalarCoercion = (schema: JsonSchema, root: JsonSchema): ValueCoercion | undefined => {
  const types = typesOf(schema, root)
  // A schema that accepts any string (or says nothing) takes the text as it is; one that accepts
  // some texts only (`Int` or `"all"`) keeps those texts, and coerces the others.
  if (types.size === 0) return undefined
  const literals = types.has("string") ? stringLiteralsOf(schema, root) : undefined
  if (types.has("string") && literals === undefined) return undefined
  const numeric = types.has("number") || types.has("integer")
  const boolean = types.has("boolean")
  const nullable = types.has("null")
  if (!numeric && !boolean && !nullable) return undefined
  return (text) => {
    if (literals?.has(text)) return text
    if (numeric && NUMERIC.test(text)) {
      // `1e400` is plain decimal text too, but no finite number: it stays text, like "Infinity".
      const number = Number(text)
      if (Number.isFinite(number)) return number
    }
    if (boolean && (text === "true" || text === "false")) return text === "true"
    if (nullable && text === "null") return null
    return text
  }
}

const keepText: ValueCoercion = (text) => text

const valueCoercion = (schema: JsonSchema | undefined, root: JsonSchema): ValueCoercion =>
  (schema === undefined ? undefined : scalarCoercion(schema, root)) ?? keepText

const itemCoercion = (schema: JsonSchema, root: JsonSchema): ItemCoercion => {
  const described = arrayItemsOf(schema, root)
  const rest = valueCoercion(described?.items, root)
  if (described === undefined || described.prefixItems.length === 0) return rest
  const positions = described.prefixItems.map((item) => valueCoercion(item, root))
  return (text, index) => (positions[index] ?? rest)(text)
}

const paramCoercion = (schema: JsonSchema, root: JsonSchema): ParamCoercion | undefined => {
  const types = typesOf(schema, root)
  const scalar = scalarCoercion(schema, root)
  if (!types.has("array")) {
    return scalar === undefined ? undefined : (value) => (typeof value === "string" ? scalar(value) : value)
  }
  const item = itemCoercion(schema, root)
  // `?id=1` is a one-element list unless the schema also takes it as a scalar; a repeated key is always a list.
  const wrap = !types.has("string")
  const single: ValueCoercion = (text) => {
    const value = scalar === undefined ? text : scalar(text)
    return value === text && wrap ? [item(text, 0)] : value
  }
  return (value) => (typeof value === "string" ? single(value) : value.map(item))
}

// JSON Schema patterns are ECMAScript regexes, read in unicode mode as ajv does; one written for
// the older syntax (`[\w\-]`) is read without it. One neither reads matches no key.
const patternRegExp = (pattern: string): RegExp | undefined => {
  for (const flags of ["u", ""]) {
    try {
      return new RegExp(pattern, flags)
    } catch {
      // Try the next reading.
    }
  }
  return undefined
}

/** Coerces keys the schema does not name by `patternProperties`, then `additionalProperties`; undefined when neither coerces. */
const otherKeysCoercion = (schema: JsonSchema): KeyCoercion | undefined => {
  const others = otherPropertiesOf(schema, schema)
  if (others === undefined) return undefined
  const patterns = others.patternProperties.flatMap(([pattern, shape]) => {
    const regExp = patternRegExp(pattern)
    return regExp === undefined ? [] : [{ regExp, coercion: paramCoercion(shape, schema) }]
  })
  const additional = others.additionalProperties === undefined ? undefined : paramCoercion(others.additionalProperties, schema)
  if (additional === undefined && patterns.every((pattern) => pattern.coercion === undefined)) return undefined
  return (name) => {
    // A key matching a pattern is not an additional one, even when its pattern's schema coerces nothing.
    for (const pattern of patterns) if (pattern.regExp.test(name)) return pattern.coercion
    return additional
  }
}

/** Coerces the keys the schema names, and passes the others on as they are. */
const namedKeysCoercion = (coercions: ReadonlyMap<string, ParamCoercion>): Coercion => (params) => {
  const coerced = emptyRecord<unknown>()
  for (const name of Object.keys(params)) {
    const value = params[name]!
    const coercion = coercions.get(name)
    coerced[name] = coercion === undefined ? value : coercion(value)
  }
  return coerced
}

/** Coerces the keys the schema names by their own schemas, and every other key as a record's. */
const allKeysCoercion = (
  properties: ReadonlyMap<string, PropertyShape>,
  coercions: ReadonlyMap<string, ParamCoercion>,
  other: KeyCoercion
): Coercion =>
(params) => {
  const coerced = emptyRecord<unknown>()
  for (const name of Object.keys(params)) {
    const named = properties.has(name)
    // A record takes `__proto__` as a key of its own, and Effect would make its value the input's prototype.
    if (!named && name === "__proto__") continue
    const value = params[name]!
    const coercion = named ? coercions.get(name) : other(name)
    coerced[name] = coercion === undefined ? value : coercion(value)
  }
  return coerced
}

/**
 * Compiles the coercion an input schema implies, once per endpoint. Undefined when no key needs
 * one, so requests to such endpoints pay nothing; only a schema with a record part pays for
 * matching the keys it does not name.
 */
export const compileCoercion = (schema: JsonSchema | undefined): Coercion | undefined => {
  if (schema === undefined) return undefined
  const properties = objectProperties(schema, schema) ?? new Map<string, PropertyShape>()
  const coercions = new Map<string, ParamCoercion>()
  for (const [name, shape] of properties) {
    const coercion = paramCoercion(shape.schema, schema)
    if (coercion !== undefined) coercions.set(name, coercion)
  }
  const other = otherKeysCoercion(schema)
  if (other !== undefined) return allKeysCoercion(properties, coercions, other)
  return coercions.size === 0 ? undefined : namedKeysCoercion(coercions)
}
