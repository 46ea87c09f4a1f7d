import { decodePointerSegment, type JsonSchema } from "../domain/jsonSchema.js"
import { sortByName } from "./sortByName.js"

const COMPONENT_REF = "#/components/schemas/"
const DEFINITION_REF = /^#\/(?:\$defs|definitions)\/([^/]+)(.*)$/
const ROOT = Symbol("root")

type LocalName = string | typeof ROOT

const componentName = (name: string): string => name.replace(/[^A-Za-z0-9._-]/g, "_") || "Schema"

// A `"$ref":"..."` pair in JSON text. Within a string value its quotes would be escaped, so it does not match.
const REF_IN_JSON = /"\$ref":"((?:[^"\\]|\\.)*)"/g

const unescapeJson = (encoded: string): string => (encoded.includes("\\") ? JSON.parse(`"${encoded}"`) as string : encoded)

const refsIn = (json: string): Array<string> => [...json.matchAll(REF_IN_JSON)].map((match) => unescapeJson(match[1]!))

/** JSON text with every `$ref` value passed through `rename`: one native parse instead of a tree copy. */
const renameRefs = (json: string, rename: (ref: string) => string): string =>
  json.replace(REF_IN_JSON, (_match, encoded: string) => `"$ref":${JSON.stringify(rename(unescapeJson(encoded)))}`)

const refersToRoot = (json: string): boolean => refsIn(json).some((ref) => ref.startsWith("#") && !DEFINITION_REF.test(ref))

/** A JSON Schema taken apart: its body (without `$schema`) and its local definitions, serialized. */
interface SchemaParts {
  readonly body: JsonSchema
  readonly bodyJson: string
  readonly definitions: ReadonlyMap<string, string>
  /** Equal for equal schemas, so schemas built apart with the same content are hoisted once. */
  readonly key: string
}

const serializeParts = (schema: JsonSchema): SchemaParts => {
  const { $defs, definitions, $schema: _dialect, ...body } = schema
  const bodyJson = JSON.stringify(body)
  const serialized = new Map<string, string>()
  let key = bodyJson
  for (const [name, definition] of Object.entries({ ...(definitions as object), ...($defs as object) })) {
    const json = JSON.stringify(definition)
    serialized.set(name, json)
    key += `\u0000${name}\u0000${json}`
  }
  return { body, bodyJson, definitions: serialized, key }
}

/**
 * `components.schemas` of one document. Each JSON Schema brings its own `$defs` (Effect identifiers,
 * zod's recursive parts) that point at `#/$defs/...`; inside an OpenAPI document those must live in
 * components. Same name and same content share one component; a different schema under a taken
 * name gets `Name_2`, `Name_3`, in the order schemas are added, so the document is deterministic.
 */
export class SchemaComponents {
  private readonly schemas: Record<string, JsonSchema> = Object.create(null)
  /** Serialized content by name, to tell a shared definition from a clash. */
  private readonly texts = new Map<string, string>()
  /** Embedded form of each schema seen, by identity and, for equal schemas built apart, by content. */
  private readonly embedded = new WeakMap<JsonSchema, JsonSchema>()
  private readonly embeddedByJson = new Map<string, JsonSchema>()
  /** What `#/components/schemas/...` references resolve against while the document is built. */
  readonly root: JsonSchema = { components: { schemas: this.schemas } }

  /** Claims `name` for a schema of the document's own, before any embedded schema can. */
  define(name: string, schema: JsonSchema): void {
    this.set(name, schema, JSON.stringify(schema))
  }

  /** The schema to embed in an operation; `fallbackName` names it if it refers to itself. */
  embed(schema: JsonSchema, fallbackName: string): JsonSchema {
    let result = this.embedded.get(schema)
    if (result === undefined) {
      const parts = serializeParts(schema)
      result = this.embeddedByJson.get(parts.key)
      if (result === undefined) this.embeddedByJson.set(parts.key, (result = this.hoist(parts, fallbackName)))
      this.embedded.set(schema, result)
    }
    return result
  }

  /** The components by name, sorted. */
  toJSON(): Record<string, JsonSchema> {
    return sortByName(this.schemas)
  }

  private set(name: string, schema: JsonSchema, text: string): void {
    this.schemas[name] = schema
    this.texts.set(name, text)
  }

  private hoist(parts: SchemaParts, fallbackName: string): JsonSchema {
    const locals = new Map<LocalName, string>(parts.definitions)
    // A reference to the root itself (recursion) or into it makes the root a component too.
    if (refersToRoot(parts.bodyJson) || [...locals.values()].some(refersToRoot)) locals.set(ROOT, parts.bodyJson)
    if (locals.size === 0) return parts.body
    const claimed = this.claimNames(locals, fallbackName)
    for (const { name, json } of claimed.values()) {
      if (this.texts.get(name) !== json) this.set(name, JSON.parse(json) as JsonSchema, json)
    }
    const root = claimed.get(ROOT)
    if (root !== undefined) return { $ref: COMPONENT_REF + root.name }
    return JSON.parse(renameRefs(parts.bodyJson, (ref) => rename(ref, (local) => claimed.get(local)?.name))) as JsonSchema
  }

  /**
   * Names every local definition. A name collides when a different schema already holds it; renaming
   * one definition changes the content of those that refer to it, so repeat until nothing collides.
   */
  private claimNames(locals: ReadonlyMap<LocalName, string>, fallbackName: string): Map<LocalName, Claimed> {
    const attempts = new Map<LocalName, number>([...locals.keys()].map((local) => [local, 1]))
    const nameOf = (local: LocalName): string => {
      const base = componentName(local === ROOT ? fallbackName : local)
      const attempt = attempts.get(local)!
      return attempt === 1 ? base : `${base}_${attempt}`
    }
    for (;;) {
      const names = new Map<LocalName, string>([...locals.keys()].map((local) => [local, nameOf(local)]))
      const claimed = new Map<LocalName, Claimed>()
      const taken = new Set<string>()
      let collided = false
      for (const [local, json] of locals) {
        const name = names.get(local)!
        const renamed = renameRefs(json, (ref) => rename(ref, (target) => names.get(target)))
        const existing = this.texts.get(name)
        if (taken.has(name) || (existing !== undefined && existing !== renamed)) {
          attempts.set(local, attempts.get(local)! + 1)
          collided = true
        }
        taken.add(name)
        claimed.set(local, { name, json: renamed })
      }
      if (!collided) return claimed
    }
  }
}

interface Claimed {
  readonly name: string
  /** The definition's JSON with its references renamed. */
  readonly json: string
}

/** A local reference as a component reference, given the component name of each local definition. */
const rename = (ref: string, componentOf: (local: LocalName) => string | undefined): string => {
  const definition = DEFINITION_REF.exec(ref)
  if (definition !== null) {
    const name = componentOf(decodePointerSegment(definition[1]!))
    return name === undefined ? ref : COMPONENT_REF + name + definition[2]
  }
  const root = componentOf(ROOT)
  return root !== undefined && ref.startsWith("#") ? COMPONENT_REF + root + ref.slice(1) : ref
}
