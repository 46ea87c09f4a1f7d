import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import { type Coercion, compileCoercion } from "./coerce.js"
import { effectJsonSchema } from "./effectJsonSchema.js"
import { InternalError, ValidationError, type ValidationIssue } from "./errors.js"
import { compileFastDecoder, NO_MATCH } from "./fastDecode.js"
import { capIssues, formatParseIssues, MAX_LISTED_ISSUES } from "./issueMessages.js"
import type { QueryParams } from "./http.js"
import type { JsonSchema } from "./jsonSchema.js"
import { type MaybePromise, andThen, isPromiseLike } from "./maybePromise.js"

/** What `inputSchema`/`outputSchema` accept: an Effect Schema or any Standard Schema v1 validator. */
export type ServeSchema = Schema.Schema.AnyNoContext | StandardSchemaV1

/** The type a caller sends (Effect: Encoded; Standard Schema: input). */
export type SchemaInput<S> = S extends Schema.Schema<infer _A, infer I, infer _R> ? I
  : S extends StandardSchemaV1<infer I, infer _O> ? I
  : unknown

/** The type a handler sees after decoding (Effect: Type; Standard Schema: output). */
export type SchemaOutput<S> = S extends Schema.Schema<infer A, infer _I, infer _R> ? A
  : S extends StandardSchemaV1<infer _I, infer O> ? O
  : unknown

/** Which side of an endpoint a schema describes: what callers send, or what they receive. */
type SchemaRole = "input" | "output"

/** A schema compiled once per endpoint into the operations the pipeline needs. */
export interface CompiledSchema {
  /** Validates request input; throws `ValidationError`. */
  readonly decode: (value: unknown) => MaybePromise<unknown>
  /** Shapes a handler result for the wire; throws `InternalError` when it does not match. */
  readonly encode: (value: unknown) => MaybePromise<unknown>
  /** JSON Schema of the wire shape, or undefined when the schema cannot describe itself (it accepts anything). */
  readonly jsonSchema: () => JsonSchema | undefined
  /** Turns query-string or form values into the types the JSON Schema names (input schemas only). */
  readonly coerce: (params: QueryParams) => unknown
}

const identity = <A>(value: A): A => value

const acceptAnything: CompiledSchema = {
  decode: identity,
  encode: identity,
  jsonSchema: () => undefined,
  coerce: identity
}

// One JSON Schema per schema object and role, however many endpoints (or recompilations) share it.
const jsonSchemaCache: Record<SchemaRole, WeakMap<object, JsonSchema | null>> = {
  input: new WeakMap(),
  output: new WeakMap()
}

const cachedJsonSchema = (schema: object, role: SchemaRole, make: () => JsonSchema | undefined): JsonSchema | undefined => {
  const cache = jsonSchemaCache[role]
  let cached = cache.get(schema)
  if (cached === undefined) {
    cached = make() ?? null
    cache.set(schema, cached)
  }
  return cached ?? undefined
}

/** `decode` returned without throwing, synchronously. */
const acceptsSync = (decode: CompiledSchema["decode"], value: unknown): boolean => {
  try {
    const result = decode(value)
    if (isPromiseLike(result)) result.then(undefined, () => {})
    return !isPromiseLike(result)
  } catch {
    return false
  }
}

/**
 * A schema for "no input" (Effect `Schema.Undefined`, zod `z.void()`/`z.undefined()`) refuses the
 * `{}` an empty query string reads as, and accepts `undefined`: such an endpoint is given
 * `undefined` when nothing was sent. Asked once, of the validator itself. (Effect's `Schema.Void`
 * accepts anything, `{}` too: it is known by its AST instead.)
 */
const takesNoInput = (decode: CompiledSchema["decode"]): boolean => !acceptsSync(decode, {}) && acceptsSync(decode, undefined)

/** Compiles the coercion on the first request that needs it, then reuses it. */
const lazyCoercion = (
  jsonSchema: () => JsonSchema | undefined,
  decode: CompiledSchema["decode"],
  declaredVoid: boolean
): ((params: QueryParams) => unknown) => {
  let coercion: Coercion | null | undefined
  let noInput = false
  return (params) => {
    if (coercion === undefined) {
      noInput = declaredVoid || takesNoInput(decode)
      coercion = compileCoercion(jsonSchema()) ?? null
    }
    if (noInput && isEmpty(params)) return undefined
    return coercion === null ? params : coercion(params)
  }
}

const isEmpty = (params: QueryParams): boolean => {
  for (const _key in params) return false
  return true
}

const withJsonSchema = (
  schema: object,
  role: SchemaRole,
  operations: Pick<CompiledSchema, "decode" | "encode">,
  make: () => JsonSchema | undefined,
  declaredVoid = false
): CompiledSchema => {
  const jsonSchema = () => cachedJsonSchema(schema, role, make)
  return { ...operations, jsonSchema, coerce: role === "input" ? lazyCoercion(jsonSchema, operations.decode, declaredVoid) : identity }
}

const INPUT_MESSAGE = "Input failed validation"

const isAsyncRequired = (issue: ParseResult.ParseIssue): boolean => issue._tag === "Forbidden"

/**
 * What a result that fails its output schema is reported as (a 500 to the client; the cause goes to
 * logs, `onError` and spans): its issues as validation words them, so a `Schema.Redacted` value is
 * not shown there either, as Effect's own ParseError text would show it.
 */
const outputFailure = (issues: ReadonlyArray<ValidationIssue>): InternalError =>
  new InternalError({
    cause: new Error(`Output failed validation: ${issues.map(({ path, message }) => `${path.length === 0 ? "(root)" : path.join(".")}: ${message}`).join("; ")}`)
  })

// Decoding goes through ParseResult, which Schema itself calls: importing effect/Schema would load
// it (and fast-check) for APIs whose schemas are zod, valibot or arktype.
const compileEffectSchema = (schema: Schema.Schema.AnyNoContext, role: SchemaRole): CompiledSchema => {
  const options = { errors: "all", onExcessProperty: "ignore" } as const
  const decodeSync = ParseResult.decodeUnknownEither(schema, options)
  // Valid input of the usual shapes skips Effect's decoder; anything else, and every failure, goes through it.
  // The shapes it covers have no transformation, so encoding a valid value gives what decoding it
  // does: outputs (and each streamed row) take the same path.
  const fastDecode = compileFastDecoder(schema.ast)
  const encodeSync = ParseResult.encodeUnknownEither(schema, options)
  // Schemas with async transformations cannot run synchronously; they take the promise path.
  const runAsync = <A>(effect: Effect.Effect<A, ParseResult.ParseIssue>, onFailure: (issue: ParseResult.ParseIssue) => Error) =>
    Effect.runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      throw failure._tag === "Some" ? onFailure(failure.value) : new InternalError({ cause: Cause.squash(exit.cause) })
    })
  const invalid = (issue: ParseResult.ParseIssue) => new ValidationError({ message: INPUT_MESSAGE, issues: formatParseIssues(issue) })
  const unshapeable = (issue: ParseResult.ParseIssue) => outputFailure(formatParseIssues(issue))
  return withJsonSchema(schema, role, {
    decode: (value) => {
      if (fastDecode !== undefined) {
        const decoded = fastDecode(value, options)
        if (decoded !== NO_MATCH) return decoded
      }
      const result = decodeSync(value)
      if (Either.isRight(result)) return result.right
      if (isAsyncRequired(result.left)) return runAsync(ParseResult.decodeUnknown(schema, options)(value), invalid)
      throw invalid(result.left)
    },
    encode: (value) => {
      if (fastDecode !== undefined) {
        const encoded = fastDecode(value, options)
        if (encoded !== NO_MATCH) return encoded
      }
      const result = encodeSync(value)
      if (Either.isRight(result)) return result.right
      if (isAsyncRequired(result.left)) return runAsync(ParseResult.encodeUnknown(schema, options)(value), unshapeable)
      throw unshapeable(result.left)
    }
  }, () => effectJsonSchema(schema), schema.ast._tag === "VoidKeyword")
}

const issuePath = (issue: StandardSchemaV1.Issue): ReadonlyArray<PropertyKey> =>
  issue.path === undefined ? [] : issue.path.map((segment) => (typeof segment === "object" ? segment.key : segment))

/** A Standard Schema's issues as an answer lists them: path and message, capped like Effect's. */
const listedIssues = (issues: ReadonlyArray<StandardSchemaV1.Issue>): ReadonlyArray<ValidationIssue> =>
  capIssues(issues.slice(0, MAX_LISTED_ISSUES + 1).map((i) => ({ path: issuePath(i), message: i.message })))

// zod throws on the first part it cannot express (Date, transforms); "any" documents only that part as `{}`.
const LIBRARY_OPTIONS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  zod: { unrepresentable: "any" }
}

/**
 * A Standard Schema's own JSON Schema, through the Standard JSON Schema interface (zod 4, arktype).
 * Validators without it (valibot without its converter package) have none.
 */
const standardJsonSchema = (schema: StandardSchemaV1, role: SchemaRole): JsonSchema | undefined => {
  const props = schema["~standard"] as StandardSchemaV1.Props & Partial<Pick<StandardJSONSchemaV1.Props, "jsonSchema">>
  const convert = props.jsonSchema?.[role]
  if (typeof convert !== "function") return undefined
  try {
    return convert({ target: "draft-2020-12", libraryOptions: LIBRARY_OPTIONS[props.vendor] })
  } catch {
    return undefined
  }
}

const compileStandardSchema = (schema: StandardSchemaV1, role: SchemaRole): CompiledSchema => {
  const validate = schema["~standard"].validate
  const check = (value: unknown, onIssues: (issues: ReadonlyArray<StandardSchemaV1.Issue>) => Error) =>
    andThen(validate(value), (result) => {
      if (result.issues !== undefined) throw onIssues(result.issues)
      return result.value
    })
  return withJsonSchema(schema, role, {
    decode: (value) =>
      check(value, (issues) =>
        new ValidationError({
          message: INPUT_MESSAGE,
          issues: listedIssues(issues)
        })),
    encode: (value) => check(value, (issues) => outputFailure(listedIssues(issues)))
  }, () => standardJsonSchema(schema, role))
}

/** Effect Schema's own check, without importing effect/Schema: its schemas carry this symbol. */
const EFFECT_SCHEMA = Symbol.for("effect/Schema")
const isObjectLike = (value: unknown): value is object =>
  (typeof value === "object" && value !== null) || typeof value === "function"
const isEffectSchema = (value: unknown): value is Schema.Schema.AnyNoContext =>
  isObjectLike(value) && EFFECT_SCHEMA in value && isObjectLike((value as Record<symbol, unknown>)[EFFECT_SCHEMA])

export const isStandardSchema = (value: unknown): value is StandardSchemaV1 => isObjectLike(value) && "~standard" in value

/** Compiles an endpoint's input or output schema; no schema accepts anything. */
export const compileSchema = (schema: ServeSchema | undefined, role: SchemaRole): CompiledSchema => {
  if (schema === undefined) return acceptAnything
  if (isEffectSchema(schema)) return compileEffectSchema(schema, role)
  if (isStandardSchema(schema)) return compileStandardSchema(schema, role)
  throw new TypeError("inputSchema/outputSchema must be an Effect Schema or a Standard Schema v1 validator")
}
