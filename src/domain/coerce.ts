import type { QueryParams } from "./http.js"
import { itemsOf, type JsonSchema, objectProperties, stringLiteralsOf, typesOf } from "./jsonSchema.js"
import { emptyRecord } from "./queryString.js"

/**
 * Query strings and form bodies carry only strings. A Coercion turns them into the numbers,
 * booleans, nulls and arrays the input's JSON Schema asks for, as ajv's `coerceTypes` does.
 * Text that does not parse stays text, so validation reports it with the property's path.
 */
export type Coercion = (params: QueryParams) => Record<string, unknown>

type ValueCoercion = (text: string) => unknown
type ParamCoercion = (value: string | ReadonlyArray<string>) => unknown

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

const paramCoercion = (schema: JsonSchema, root: JsonSchema): ParamCoercion | undefined => {
  const types = typesOf(schema, root)
  const scalar = scalarCoercion(schema, root)
  if (!types.has("array")) {
    return scalar === undefined ? undefined : (value) => (typeof value === "string" ? scalar(value) : value)
  }
  const items = itemsOf(schema, root)
  const item: ValueCoercion = (items === undefined ? undefined : scalarCoercion(items, root)) ?? ((text) => text)
  // `?id=1` is a one-element list unless the schema also takes it as a scalar; a repeated key is always a list.
  const wrap = !types.has("string")
  const single: ValueCoercion = (text) => {
    const value = scalar === undefined ? text : scalar(text)
    return value === text && wrap ? [item(text)] : value
  }
  return (value) => (typeof value === "string" ? single(value) : value.map(item))
}

/**
 * Compiles the coercion an input schema implies, once per endpoint. Undefined when no property
 * needs one, so requests to such endpoints pay nothing.
 */
export const compileCoercion = (schema: JsonSchema | undefined): Coercion | undefined => {
  if (schema === undefined) return undefined
  const properties = objectProperties(schema, schema)
  if (properties === undefined) return undefined
  const coercions = new Map<string, ParamCoercion>()
  for (const [name, shape] of properties) {
    const coercion = paramCoercion(shape.schema, schema)
    if (coercion !== undefined) coercions.set(name, coercion)
  }
  if (coercions.size === 0) return undefined
  return (params) => {
    const coerced = emptyRecord<unknown>()
    for (const name of Object.keys(params)) {
      const value = params[name]!
      const coercion = coercions.get(name)
      coerced[name] = coercion === undefined ? value : coercion(value)
    }
    return coerced
  }
}
