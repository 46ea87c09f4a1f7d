import * as Option from "effect/Option"
import type { ParseOptions } from "effect/SchemaAST"
import * as AST from "effect/SchemaAST"

/** What a fast decoder returns for input it does not accept: the full decoder then says why. */
export const NO_MATCH: unique symbol = Symbol("queryserve/NoMatch")

/** Decodes input it accepts to exactly what Effect's own decoder returns, or NO_MATCH. */
type FastDecoder = (input: unknown, options: ParseOptions) => unknown

const isRecord = (input: unknown): input is Record<PropertyKey, unknown> =>
  typeof input === "object" && input !== null && !Array.isArray(input)

const hasOwn = (target: object, key: PropertyKey): boolean => Object.prototype.hasOwnProperty.call(target, key)

/** Nodes whose decoded value is the input itself: a union of them may take whichever member matches. */
const isScalar = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
      return true
    case "Refinement":
      return isScalar(ast.from)
    case "Union":
      return ast.types.every(isScalar)
    default:
      return false
  }
}

/**
 * Effect's own filters (`Int`, `between`, `minLength`, `pattern`...) carry a schema id of Effect's and
 * are pure predicates. A filter of the application's is left to Effect's decoder, so that it runs
 * exactly once per decode even when the input fails (the fast path would call it a second time).
 */
const isBuiltInFilter = (ast: AST.Refinement): boolean => {
  const id = AST.getSchemaIdAnnotation(ast)
  return Option.isSome(id) && typeof id.value === "symbol" && (id.value.description ?? "").startsWith("effect/SchemaId/")
}

const scalar = (accepts: (input: unknown) => boolean): FastDecoder => (input) => (accepts(input) ? input : NO_MATCH)

const structDecoder = (ast: AST.TypeLiteral): FastDecoder | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<{ readonly name: string; readonly optional: boolean; readonly decode: FastDecoder }> = []
  for (const signature of ast.propertySignatures) {
    const decode = compile(signature.type)
    if (decode === undefined || typeof signature.name !== "string") return undefined
    fields.push({ name: signature.name, optional: signature.isOptional, decode })
  }
  // Excess properties are dropped (onExcessProperty "ignore"); declared keys come in declaration order.
  return (input, options) => {
    if (!isRecord(input)) return NO_MATCH
    const output: Record<string, unknown> = {}
    for (const field of fields) {
      if (field.optional && !hasOwn(input, field.name)) continue
      const value = field.decode(input[field.name], options)
      if (value === NO_MATCH) return NO_MATCH
      output[field.name] = value
    }
    return output
  }
}

const arrayDecoder = (ast: AST.TupleType): FastDecoder | undefined => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
  const element = compile(ast.rest[0]!.type)
  if (element === undefined) return undefined
  return (input, options) => {
    if (!Array.isArray(input)) return NO_MATCH
    const output: Array<unknown> = []
    for (let i = 0; i < input.length; i++) {
      const value = element(input[i], options)
      if (value === NO_MATCH) return NO_MATCH
      output.push(value)
    }
    return output
  }
}

const compileNode = (ast: AST.AST): FastDecoder | undefined => {
  switch (ast._tag) {
    case "Literal": {
      const literal = ast.literal
      return scalar((input) => input === literal)
    }
    case "StringKeyword":
      return scalar((input) => typeof input === "string")
    case "NumberKeyword":
      return scalar((input) => typeof input === "number")
    case "BooleanKeyword":
      return scalar((input) => typeof input === "boolean")
    case "UndefinedKeyword":
      return scalar((input) => input === undefined)
    case "Refinement": {
      if (!isBuiltInFilter(ast)) return undefined
      const from = compile(ast.from)
      if (from === undefined) return undefined
      return (input, options) => {
        const value = from(input, options)
        return value !== NO_MATCH && Option.isNone(ast.filter(value, options, ast)) ? value : NO_MATCH
      }
    }
    case "Union": {
      if (!isScalar(ast)) return undefined
      const members = ast.types.map(compile)
      if (members.some((member) => member === undefined)) return undefined
      return (input, options) => {
        for (const member of members) if (member!(input, options) !== NO_MATCH) return input
        return NO_MATCH
      }
    }
    case "TypeLiteral":
      return ast.propertySignatures.length === 0 ? undefined : structDecoder(ast)
    case "TupleType":
      return arrayDecoder(ast)
    default:
      return undefined
  }
}

/** A node that changes how Effect decodes (its own parse options, a fallback value) is left to Effect. */
const compile = (ast: AST.AST): FastDecoder | undefined =>
  Option.isSome(AST.getParseOptionsAnnotation(ast)) || Option.isSome(AST.getDecodingFallbackAnnotation(ast))
    ? undefined
    : compileNode(ast)

/**
 * A decoder for the common shape of API input, compiled once per schema: structs, arrays, unions of
 * literals, strings, numbers and booleans, and Effect's own refinements of them (`Int`, `between`,
 * `minLength`..., whose filters are called). On valid input it returns what Effect's decoder returns (a new struct
 * with only the declared keys, in their order) at a fraction of the cost; on invalid input NO_MATCH,
 * and Effect's decoder runs to report the issues. Undefined for schemas it does not cover
 * (transformations, classes, records, tuples...): those always take Effect's decoder.
 */
export const compileFastDecoder = (ast: AST.AST): FastDecoder | undefined => compile(ast)
