/** A JSON Schema (draft 2020-12) as plain data. */
export type JsonSchema = Readonly<Record<string, unknown>>

export type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object"

/** What a schema says about one property of an object. */
export interface PropertyShape {
  readonly schema: JsonSchema
  readonly required: boolean
}

// A `$ref` chain or union nesting deeper than this is a cycle; stop following it.
const MAX_DEPTH = 32

const isSchema = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value)

/** One segment of a JSON pointer (`~1` is `/`, `~0` is `~`), as found in a `$ref`. */
export const decodePointerSegment = (segment: string): string => {
  if (!/[~%]/.test(segment)) return segment
  let decoded = segment
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    // A lone `%` is not an escape: keep the text.
  }
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~")
}

/** Follows a local reference (`#`, `#/$defs/Name`, any JSON pointer) against `root`. */
const resolveRef = (root: JsonSchema, ref: string): JsonSchema | undefined => {
  if (!ref.startsWith("#")) return undefined
  let target: unknown = root
  for (const segment of ref.slice(1).split("/").slice(1)) {
    if (!isSchema(target)) return undefined
    target = target[decodePointerSegment(segment)]
  }
  return isSchema(target) ? target : undefined
}

/** The schema a `$ref` chain ends at (the schema itself when it has none). */
export const dereference = (schema: JsonSchema, root: JsonSchema): JsonSchema => {
  let current = schema
  for (let depth = 0; typeof current.$ref === "string" && depth < MAX_DEPTH; depth++) {
    const next = resolveRef(root, current.$ref)
    if (next === undefined) return current
    current = next
  }
  return current
}

const subschemas = (schema: JsonSchema, keyword: "anyOf" | "oneOf" | "allOf"): ReadonlyArray<JsonSchema> => {
  const list = schema[keyword]
  return Array.isArray(list) ? list.filter(isSchema) : []
}

/** The alternatives a value may match: `anyOf`/`oneOf` branches, flattened, references followed. */
const alternatives = (schema: JsonSchema, root: JsonSchema, depth = 0): ReadonlyArray<JsonSchema> => {
  const resolved = dereference(schema, root)
  const branches = [...subschemas(resolved, "anyOf"), ...subschemas(resolved, "oneOf")]
  if (branches.length === 0 || depth >= MAX_DEPTH) return [resolved]
  return branches.flatMap((branch) => alternatives(branch, root, depth + 1))
}

const typeOfValue = (value: unknown): JsonType =>
  value === null ? "null" : Array.isArray(value) ? "array" : (typeof value as JsonType)

/**
 * The JSON types of one alternative: its `type`, else those of its `const`/`enum` values, else those
 * of its first `allOf` part (followed through `$ref`: Effect writes refinements as `allOf` of a ref).
 */
const ownTypes = (schema: JsonSchema, root: JsonSchema): ReadonlyArray<JsonType> => {
  const type = schema.type
  if (typeof type === "string") return [type as JsonType]
  if (Array.isArray(type)) return type as ReadonlyArray<JsonType>
  if ("const" in schema) return [typeOfValue(schema.const)]
  if (Array.isArray(schema.enum)) return schema.enum.map(typeOfValue)
  const first = subschemas(schema, "allOf")[0]
  return first !== undefined && isSchema(first) ? ownTypes(dereference(first, root), root) : []
}

/** Every JSON type a schema admits; empty when it does not say (anything goes). */
export const typesOf = (schema: JsonSchema, root: JsonSchema): ReadonlySet<JsonType> => {
  const types = new Set<JsonType>()
  for (const alternative of alternatives(schema, root)) {
    const own = ownTypes(dereference(alternative, root), root)
    if (own.length === 0) return new Set()
    for (const type of own) types.add(type)
  }
  return types
}

/**
 * The texts a schema's string alternatives allow when each of them is a `const` or an `enum`
 * (Effect's `Literal("all")` beside `Int`); undefined when one takes any string.
 */
export const stringLiteralsOf = (schema: JsonSchema, root: JsonSchema): ReadonlySet<string> | undefined => {
  const literals = new Set<string>()
  for (const alternative of alternatives(schema, root)) {
    const resolved = dereference(alternative, root)
    if (!ownTypes(resolved, root).includes("string")) continue
    const values = "const" in resolved ? [resolved.const] : Array.isArray(resolved.enum) ? resolved.enum : undefined
    if (values === undefined) return undefined
    for (const value of values) if (typeof value === "string") literals.add(value)
  }
  return literals
}

/** What an array schema says of its items: a tuple's positions (`prefixItems`), then the rest (`items`). */
interface ArrayItems {
  // `true` or `false` at a position says nothing of its type: `{}` keeps the others in place.
  readonly prefixItems: ReadonlyArray<JsonSchema>
  readonly items: JsonSchema | undefined
}

/** The items of an array schema, taken from the first array alternative that describes them. */
export const arrayItemsOf = (schema: JsonSchema, root: JsonSchema): ArrayItems | undefined => {
  for (const alternative of alternatives(schema, root)) {
    const prefixItems = Array.isArray(alternative.prefixItems) ? alternative.prefixItems.map((item) => (isSchema(item) ? item : {})) : []
    const items = isSchema(alternative.items) ? alternative.items : undefined
    if (prefixItems.length > 0 || items !== undefined) return { prefixItems, items }
  }
  return undefined
}

const mergeAllOf = (schema: JsonSchema, root: JsonSchema, depth: number): Map<string, PropertyShape> | undefined => {
  const resolved = dereference(schema, root)
  const parts = [resolved, ...subschemas(resolved, "allOf")]
  let merged: Map<string, PropertyShape> | undefined
  for (const part of parts) {
    const own = part === resolved ? ownProperties(part) : objectProperties(part, root, depth + 1)
    if (own === undefined) continue
    merged ??= new Map()
    for (const [name, shape] of own) {
      const known = merged.get(name)
      merged.set(name, { schema: known?.schema ?? shape.schema, required: shape.required || known?.required === true })
    }
  }
  return merged
}

const ownProperties = (schema: JsonSchema): Map<string, PropertyShape> | undefined => {
  if (!isSchema(schema.properties)) return undefined
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const shapes = new Map<string, PropertyShape>()
  for (const [name, property] of Object.entries(schema.properties)) {
    if (isSchema(property)) shapes.set(name, { schema: property, required: required.has(name) })
  }
  return shapes
}

/**
 * The properties of an object schema, references followed: `allOf` parts are merged; for unions
 * (`anyOf`/`oneOf`, a nullable object) a property is required only when every object branch requires it.
 * Undefined when the schema describes no properties.
 */
export const objectProperties = (schema: JsonSchema, root: JsonSchema, depth = 0): ReadonlyMap<string, PropertyShape> | undefined => {
  if (depth >= MAX_DEPTH) return undefined
  const branches = alternatives(schema, root).map((branch) => mergeAllOf(branch, root, depth)).filter((b) => b !== undefined)
  if (branches.length <= 1) return branches[0]
  const united = new Map<string, PropertyShape>()
  for (const branch of branches) {
    for (const [name, shape] of branch) if (!united.has(name)) united.set(name, shape)
  }
  for (const [name, shape] of united) {
    const requiredEverywhere = branches.every((branch) => branch.get(name)?.required === true)
    if (shape.required !== requiredEverywhere) united.set(name, { ...shape, required: requiredEverywhere })
  }
  return united
}

/** What an object schema says of the keys its `properties` do not name: records and catch-alls. */
interface OtherProperties {
  /** `patternProperties`, in order: a key matching a pattern takes its schema. */
  readonly patternProperties: ReadonlyArray<readonly [pattern: string, schema: JsonSchema]>
  /** `additionalProperties` when it is a schema (not `true` or `false`): for keys no pattern matches. */
  readonly additionalProperties: JsonSchema | undefined
}

/** The object schemas a value must or may match: alternatives and their `allOf` parts, references followed. */
const objectParts = (schema: JsonSchema, root: JsonSchema, depth: number): ReadonlyArray<JsonSchema> => {
  if (depth >= MAX_DEPTH) return []
  return alternatives(schema, root).flatMap((branch) => [branch, ...subschemas(branch, "allOf").flatMap((part) => objectParts(part, root, depth + 1))])
}

/**
 * The patterns and the schema for keys an object schema does not name, gathered from every part:
 * the first `additionalProperties` schema counts. Undefined when no part has either.
 */
export const otherPropertiesOf = (schema: JsonSchema, root: JsonSchema): OtherProperties | undefined => {
  const patternProperties: Array<readonly [string, JsonSchema]> = []
  let additionalProperties: JsonSchema | undefined
  for (const part of objectParts(schema, root, 0)) {
    if (isSchema(part.patternProperties)) {
      // A `true`/`false` pattern schema still claims its keys from `additionalProperties`.
      for (const [pattern, property] of Object.entries(part.patternProperties)) patternProperties.push([pattern, isSchema(property) ? property : {}])
    }
    if (additionalProperties === undefined && isSchema(part.additionalProperties)) additionalProperties = part.additionalProperties
  }
  return patternProperties.length === 0 && additionalProperties === undefined ? undefined : { patternProperties, additionalProperties }
}
