import type { StandardSchemaV1 } from "@standard-schema/spec"
import { Either, Exit, JSONSchema, ParseResult, Schema, Cause, Effect } from "effect"
import { InternalError, ValidationError, type ValidationIssue } from "./errors.js"
import { type MaybePromise, andThen } from "./maybePromise.js"

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

export type JsonSchema = Readonly<Record<string, unknown>>

/** A schema compiled once per endpoint into the operations the pipeline needs. */
export interface CompiledSchema {
  /** Validates request input; throws `ValidationError`. */
  readonly decode: (value: unknown) => MaybePromise<unknown>
  /** Shapes a handler result for the wire; throws `InternalError` when it does not match. */
  readonly encode: (value: unknown) => MaybePromise<unknown>
  /** JSON Schema of the wire shape, or undefined when the schema cannot describe itself. */
  readonly jsonSchema: () => JsonSchema | undefined
}

const acceptAnything: CompiledSchema = {
  decode: (value) => value,
  encode: (value) => value,
  jsonSchema: () => undefined
}

const INPUT_MESSAGE = "Input failed validation"

const fromParseError = (error: ParseResult.ParseError): ReadonlyArray<ValidationIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({ path: issue.path, message: issue.message }))

const isAsyncRequired = (error: ParseResult.ParseError): boolean => error.issue._tag === "Forbidden"

const compileEffectSchema = (schema: Schema.Schema.AnyNoContext): CompiledSchema => {
  const options = { errors: "all", onExcessProperty: "ignore" } as const
  const decodeSync = Schema.decodeUnknownEither(schema, options)
  const encodeSync = Schema.encodeUnknownEither(schema, options)
  // Schemas with async transformations cannot run synchronously; they take the promise path.
  const runAsync = <A>(effect: Effect.Effect<A, ParseResult.ParseError>, onFailure: (e: ParseResult.ParseError) => Error) =>
    Effect.runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      throw failure._tag === "Some" ? onFailure(failure.value) : new InternalError({ cause: Cause.squash(exit.cause) })
    })
  const invalid = (error: ParseResult.ParseError) => new ValidationError({ message: INPUT_MESSAGE, issues: fromParseError(error) })
  const unshapeable = (error: ParseResult.ParseError) => new InternalError({ cause: error })
  let jsonSchema: JsonSchema | undefined
  return {
    decode: (value) => {
      const result = decodeSync(value)
      if (Either.isRight(result)) return result.right
      if (isAsyncRequired(result.left)) return runAsync(Schema.decodeUnknown(schema, options)(value), invalid)
      throw invalid(result.left)
    },
    encode: (value) => {
      const result = encodeSync(value)
      if (Either.isRight(result)) return result.right
      if (isAsyncRequired(result.left)) return runAsync(Schema.encodeUnknown(schema, options)(value), unshapeable)
      throw unshapeable(result.left)
    },
    jsonSchema: () => (jsonSchema ??= JSONSchema.make(Schema.encodedSchema(schema), { target: "jsonSchema2020-12" }) as unknown as JsonSchema)
  }
}

const issuePath = (issue: StandardSchemaV1.Issue): ReadonlyArray<PropertyKey> =>
  issue.path === undefined ? [] : issue.path.map((segment) => (typeof segment === "object" ? segment.key : segment))

const compileStandardSchema = (schema: StandardSchemaV1): CompiledSchema => {
  const validate = schema["~standard"].validate
  const check = (value: unknown, onIssues: (issues: ReadonlyArray<StandardSchemaV1.Issue>) => Error) =>
    andThen(validate(value), (result) => {
      if (result.issues !== undefined) throw onIssues(result.issues)
      return result.value
    })
  return {
    decode: (value) =>
      check(value, (issues) =>
        new ValidationError({ message: INPUT_MESSAGE, issues: issues.map((i) => ({ path: issuePath(i), message: i.message })) })),
    encode: (value) => check(value, (issues) => new InternalError({ cause: new Error(`Output failed validation: ${issues[0]?.message}`) })),
    jsonSchema: () => undefined
  }
}

export const isStandardSchema = (value: unknown): value is StandardSchemaV1 =>
  (typeof value === "object" || typeof value === "function") && value !== null && "~standard" in value

export const compileSchema = (schema: ServeSchema | undefined): CompiledSchema => {
  if (schema === undefined) return acceptAnything
  if (Schema.isSchema(schema)) return compileEffectSchema(schema)
  if (isStandardSchema(schema)) return compileStandardSchema(schema)
  throw new TypeError("inputSchema/outputSchema must be an Effect Schema or a Standard Schema v1 validator")
}
