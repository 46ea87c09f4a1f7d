import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type { JsonSchema } from "./jsonSchema.js"

/**
 * The wire side of an Effect Schema as JSON Schema 2020-12, refinements kept, as callers should read
 * it: decoding defaults (`optionalWith(..., { default })`) become `default`, and the titles Effect
 * gives its own refinements (`int`, `between(1, 100)`) are left out, and so are the `$id`s it gives
 * its keywords (`"/schemas/unknown"`). Undefined for a schema JSON Schema cannot express.
 */
export const effectJsonSchema = (schema: Schema.Schema.AnyNoContext): JsonSchema | undefined => {
  try {
    // JSONSchema.make reads only the schema's `ast`: a rewritten AST needs no Schema built around it
    // (`Schema.make` would load effect/Schema, and fast-check with it, for APIs that use zod or valibot).
    const rewritten = { ast: new Documented().rewrite(schema.ast) } as unknown as Schema.Schema.AnyNoContext
    return withoutEffectIds(JSONSchema.make(rewritten, { target: "jsonSchema2020-12" }) as unknown as JsonSchema)
  } catch {
    return undefined
  }
}

/**
 * Whether an Effect Schema's wire side is nothing (`Schema.Void`, `Schema.Undefined`): as an output,
 * the handler's result is `undefined`, which the server answers with 204.
 */
export const encodesToNothing = (schema: Schema.Schema.AnyNoContext): boolean => {
  // The wire side is where transformations and refinements start from (`AST.encodedAST` would rebuild the whole tree).
  let encoded = schema.ast
  while (AST.isTransformation(encoded) || AST.isRefinement(encoded)) encoded = encoded.from
  return AST.isVoidKeyword(encoded) || AST.isUndefinedKeyword(encoded)
}

// Effect gives `unknown`, `any`, `void`, `object`, `never` and `{}` an `$id` of "/schemas/<name>", copied
// into every use: an OpenAPI document holding one twice is invalid ("$id defined more than once").
const EFFECT_ID = /^\/schemas\//
// Keywords whose values are data (an `$id` in a default is the caller's), and those that map names to schemas.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "default", "enum", "examples"])
const SCHEMA_MAPS: ReadonlySet<string> = new Set(["$defs", "definitions", "properties", "patternProperties", "dependentSchemas"])

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isEffectId = (keyword: string, value: unknown): boolean => keyword === "$id" && typeof value === "string" && EFFECT_ID.test(value)

const withoutEffectIds = (schema: JsonSchema): JsonSchema =>
  Object.fromEntries(
    Object.entries(schema)
      .filter(([keyword, value]) => !isEffectId(keyword, value))
      .map(([keyword, value]) => [keyword, keywordWithoutIds(keyword, value)])
  )

/** A keyword's value without Effect's `$id`s: data as it is; a schema, a list of them or a map of them walked. */
const keywordWithoutIds = (keyword: string, value: unknown): unknown => {
  if (DATA_KEYWORDS.has(keyword)) return value
  if (SCHEMA_MAPS.has(keyword) && isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, subschemaWithoutIds(schema)]))
  }
  return subschemaWithoutIds(value)
}

const subschemaWithoutIds = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(subschemaWithoutIds) : isRecord(value) ? withoutEffectIds(value) : value

// Effect's built-in refinements carry a schema id of its own and a title naming the function:
// `int`, `between(1, 100)`, `minLength(2)`. A title written for people does not look like that.
const EFFECT_SCHEMA_ID = /^effect\/SchemaId\//
const FUNCTION_NAME = /^[a-z][A-Za-z]*(?:\(.*\))?$/

const isEffectTitle = (ast: AST.Refinement): boolean => {
  const id = AST.getSchemaIdAnnotation(ast).pipe(Option.getOrUndefined)
  const title = AST.getTitleAnnotation(ast).pipe(Option.getOrUndefined)
  return typeof id === "symbol" && EFFECT_SCHEMA_ID.test(id.description ?? "") && title !== undefined && FUNCTION_NAME.test(title)
}

/** A copy of a node (any class) with some fields replaced; identifiers and other annotations stay. */
const clone = <A extends object>(node: A, fields: Partial<A>): A => {
  const copy = Object.create(Object.getPrototypeOf(node), Object.getOwnPropertyDescriptors(node)) as A
  for (const [key, value] of Object.entries(fields)) Object.defineProperty(copy, key, { value, enumerable: true })
  return copy
}

/** The value a property takes when the caller leaves it out (a decoding default), if it has one. */
const decodingDefault = (transformation: AST.PropertySignatureTransformation): Option.Option<unknown> => {
  try {
    return transformation.decode(Option.none())
  } catch {
    return Option.none()
  }
}

/**
 * Rewrites an AST for documentation only (validation keeps the original). Nodes that need no change
 * are returned as they are; each node is rewritten once, so shared and recursive parts stay shared.
 */
class Documented {
  private readonly done = new Map<AST.AST, AST.AST>()

  rewrite(ast: AST.AST): AST.AST {
    let result = this.done.get(ast)
    if (result === undefined) {
      result = this.rewriteNode(ast)
      this.done.set(ast, result)
    }
    return result
  }

  private rewriteNode(ast: AST.AST): AST.AST {
    switch (ast._tag) {
      case "Refinement": {
        const from = this.rewrite(ast.from)
        const untitled = isEffectTitle(ast)
        if (from === ast.from && !untitled) return ast
        return clone(ast, { from, ...(untitled ? { annotations: { ...ast.annotations, [AST.TitleAnnotationId]: undefined } } : {}) })
      }
      case "Transformation": {
        const from = this.withDefaults(this.rewrite(ast.from), ast.transformation)
        const to = this.rewrite(ast.to)
        return from === ast.from && to === ast.to ? ast : clone(ast, { from, to })
      }
      case "TypeLiteral": {
        let changed = false
        const propertySignatures = ast.propertySignatures.map((signature) => {
          const type = this.rewrite(signature.type)
          if (type === signature.type) return signature
          changed = true
          return clone(signature, { type })
        })
        return changed ? clone(ast, { propertySignatures }) : ast
      }
      case "TupleType": {
        let changed = false
        const rewriteType = <T extends AST.Type>(element: T): T => {
          const type = this.rewrite(element.type)
          if (type === element.type) return element
          changed = true
          return clone(element, { type } as Partial<T>)
        }
        const elements = ast.elements.map(rewriteType)
        const rest = ast.rest.map(rewriteType)
        return changed ? clone(ast, { elements, rest }) : ast
      }
      case "Union": {
        const types = ast.types.map((member) => this.rewrite(member))
        return types.every((member, i) => member === ast.types[i]) ? ast : clone(ast, { types: types as unknown as AST.Union["types"] })
      }
      case "Suspend": {
        const original = ast.f
        return clone(ast, { f: () => this.rewrite(original()) })
      }
      default:
        return ast
    }
  }

  /** The encoded struct with each decoding default as a `default` annotation of its property. */
  private withDefaults(from: AST.AST, transformation: AST.TransformationKind): AST.AST {
    if (transformation._tag !== "TypeLiteralTransformation" || !AST.isTypeLiteral(from)) return from
    const defaults = new Map<PropertyKey, unknown>()
    for (const property of transformation.propertySignatureTransformations) {
      const value = decodingDefault(property)
      if (Option.isSome(value)) defaults.set(property.from, value.value)
    }
    if (defaults.size === 0) return from
    return clone(from, {
      propertySignatures: from.propertySignatures.map((signature) =>
        defaults.has(signature.name)
          // Effect encodes the default through the property's schema, and drops it if that fails.
          ? clone(signature, { annotations: { ...signature.annotations, [AST.DefaultAnnotationId]: defaults.get(signature.name) } })
          : signature
      )
    })
  }
}
