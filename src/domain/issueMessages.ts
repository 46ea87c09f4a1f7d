import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"
import type { ValidationIssue } from "./errors.js"

/**
 * Effect Schema parse issues as `{ path, message }` in one style, whichever check failed:
 * `expected a number, got "3abc"`, `expected an integer from 1 to 100, got 300`, `is required`.
 * A `message` annotation (or a filter that returns its own text) is used as written.
 */
export const formatParseIssues = (issue: ParseResult.ParseIssue): ReadonlyArray<ValidationIssue> => {
  const issues: Array<ValidationIssue> = []
  collect(issue, [], issues)
  return capIssues(issues)
}

/**
 * Issues listed in one answer. A body within the size limit can hold a bad value in each of 100,000
 * list items: listing them all took seconds and tens of megabytes.
 */
export const MAX_LISTED_ISSUES = 100

/** The first MAX_LISTED_ISSUES of `issues`, and one more saying that others were left out. */
export const capIssues = (issues: ReadonlyArray<ValidationIssue>): ReadonlyArray<ValidationIssue> =>
  issues.length <= MAX_LISTED_ISSUES
    ? issues
    : [...issues.slice(0, MAX_LISTED_ISSUES), { path: [], message: `more issues not listed (the first ${MAX_LISTED_ISSUES} are)` }]

const collect = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<ValidationIssue>): void => {
  // One past the cap is enough to know that some are left out.
  if (out.length > MAX_LISTED_ISSUES) return
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, path.concat(issue.path), out)
    case "Composite":
    case "Refinement":
    case "Transformation": {
      const message = annotatedMessage(issue)
      if (message !== undefined) return void out.push({ path, message })
      if (issue._tag === "Transformation" && isRedacted(issue.ast.to)) return collectConcealed(issue.issue, path, out)
      if (issue._tag !== "Composite") return collect(issue.issue, path, out)
      const inner = (Array.isArray(issue.issues) ? issue.issues : [issue.issues]) as ReadonlyArray<ParseResult.ParseIssue>
      if (!AST.isUnion(issue.ast)) return inner.forEach((member) => collect(member, path, out))
      // A union: the members whose type matched say what is wrong with the value; when none did, one
      // issue lists what would have been accepted (`expected a string or null, got 3`).
      const closer = inner.filter((member) => !isTypeMismatch(member))
      if (closer.length > 0) return closer.forEach((member) => collect(member, path, out))
      return void out.push({ path, message: `expected ${expectation(withoutUndefined(issue.ast), 0)}, got ${formatValue(issue.actual)}` })
    }
    case "Type":
      return void out.push({ path, message: annotatedMessage(issue) ?? typeMessage(issue) })
    case "Missing": {
      const missing = AST.getMissingMessageAnnotation(issue.ast).pipe(Option.map((make) => resolve(make())), Option.getOrUndefined)
      return void out.push({ path, message: missing ?? "is required" })
    }
    case "Unexpected":
      return void out.push({ path, message: "is not allowed" })
    case "Forbidden":
      return void out.push({ path, message: "could not be checked" })
  }
}

/** Effect's `Redacted` type (the target of `Schema.Redacted`), known by the description it declares. */
const isRedacted = (ast: AST.AST): boolean =>
  AST.isDeclaration(ast) && AST.getDescriptionAnnotation(ast).pipe(Option.exists((text) => text.startsWith("Redacted(")))

/**
 * The issues of a value meant to be redacted (a password, a token), without the value: a message
 * goes back to the client, and into logs and `onError`.
 */
const collectConcealed = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<ValidationIssue>): void => {
  const inner: Array<ValidationIssue> = []
  collect(issue, path, inner)
  for (const found of inner) out.push({ path: found.path, message: found.message.replace(/, got [\s\S]*$/, ", got a value that is not shown") })
}

/** A value of the wrong type altogether, as opposed to one that failed a check or has a bad part. */
const isTypeMismatch = (issue: ParseResult.ParseIssue): boolean =>
  issue._tag === "Type" && issue.message === undefined && !AST.isRefinement(issue.ast) && !AST.isTransformation(issue.ast)

/** An optional field's union without its `undefined` member, which says nothing about a value that was sent. */
const withoutUndefined = (union: AST.Union): AST.AST =>
  AST.Union.make(union.types.filter((member) => !AST.isUndefinedKeyword(member) && !AST.isVoidKeyword(member)))

const resolve = (message: string | Effect.Effect<string>): string => (typeof message === "string" ? message : Effect.runSync(message))

/**
 * The text of a `message` annotation, with Effect's own precedence: on a struct, the from-side of a
 * refinement or an encoding step, it yields to the messages inside unless it says `override: true`.
 */
const annotatedMessage = (issue: ParseResult.ParseIssue): string | undefined => {
  if (!("ast" in issue)) return undefined
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  const result = annotation.value(issue)
  const { message, override } = typeof result === "string" || Effect.isEffect(result)
    ? { message: result, override: false }
    : result
  const yieldsToInner = !override && (
    issue._tag === "Composite" ||
    (issue._tag === "Refinement" && issue.kind === "From") ||
    (issue._tag === "Transformation" && issue.kind !== "Transformation")
  )
  if (!yieldsToInner) return resolve(message)
  return issue._tag === "Refinement" || issue._tag === "Transformation" ? annotatedMessage(issue.issue) : undefined
}

// Effect's built-in transformations (NumberFromString, BigInt, ...) fail with this wording of their own.
const EFFECT_DECODE_FAILURE = /^Unable to decode /

const typeMessage = (issue: ParseResult.Type): string => {
  if (issue.message !== undefined && !EFFECT_DECODE_FAILURE.test(issue.message)) return issue.message
  return `expected ${expectation(issue.ast, 0)}, got ${formatValue(issue.actual)}`
}

const MAX_VALUE_LENGTH = 48

/** The value a caller sent, short enough for a message. */
export const formatValue = (value: unknown): string => {
  let text: string
  if (value === undefined) return "nothing"
  if (typeof value === "bigint") text = String(value)
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? "an invalid date" : value.toISOString()
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH - 1)}…` : text
}

const KEYWORDS: Readonly<Record<string, string>> = {
  StringKeyword: "a string",
  NumberKeyword: "a number",
  BooleanKeyword: "a boolean",
  BigIntKeyword: "an integer",
  SymbolKeyword: "a symbol",
  ObjectKeyword: "an object",
  TypeLiteral: "an object",
  TupleType: "an array",
  UndefinedKeyword: "nothing",
  VoidKeyword: "nothing",
  NeverKeyword: "nothing at all",
  UnknownKeyword: "any value",
  AnyKeyword: "any value"
}

// Suspended (recursive) schemas could describe themselves forever.
const MAX_DEPTH = 8

const annotation = (ast: AST.AST, get: (ast: AST.Annotated) => Option.Option<string>): string | undefined =>
  Option.getOrUndefined(get(ast))

/** What a schema expects, as a noun phrase: `a string`, `one of "eu", "us"`, `an integer from 1 to 100`. */
const expectation = (ast: AST.AST, depth: number): string => {
  if (depth > MAX_DEPTH) return "a valid value"
  switch (ast._tag) {
    case "Literal":
      return formatValue(ast.literal)
    case "Enums":
      return `one of ${ast.enums.map(([, value]) => formatValue(value)).join(", ")}`
    case "TemplateLiteral":
      return `a string matching ${AST.getTemplateLiteralRegExp(ast).source}`
    case "Union":
      return ast.types.every(AST.isLiteral)
        ? `one of ${ast.types.map((member) => formatValue((member as AST.Literal).literal)).join(", ")}`
        : [...new Set(ast.types.map((member) => expectation(member, depth + 1)))].join(" or ")
    case "Refinement":
      return refinementExpectation(ast, depth)
    case "Transformation":
      return expectation(ast.to, depth + 1)
    case "Suspend":
      return expectation(ast.f(), depth + 1)
    case "Declaration":
    case "UniqueSymbol":
      return annotation(ast, AST.getDescriptionAnnotation) ?? annotation(ast, AST.getIdentifierAnnotation) ?? "a valid value"
    default:
      return KEYWORDS[ast._tag] ?? "a valid value"
  }
}

type Constraints = Readonly<Record<string, unknown>>

const constraintsOf = (ast: AST.Refinement): Constraints | undefined =>
  Option.getOrUndefined(AST.getJSONSchemaAnnotation(ast)) as Constraints | undefined

/**
 * A refinement described by the constraint it checks (the same keywords its JSON Schema shows), on
 * the noun of what it refines: `Int` then `between(1, 100)` reads "an integer from 1 to 100".
 * Refinements that state no known constraint fall back to their description, then title.
 */
const refinementExpectation = (ast: AST.Refinement, depth: number): string => {
  const own = constraintsOf(ast) ?? {}
  const base = baseNoun(ast, depth)
  const qualifiers = [...numberQualifiers(own), ...lengthQualifiers(own, base.unit), ...textQualifiers(own)]
  if (qualifiers.length > 0) return `${own.type === "integer" ? "an integer" : base.noun} ${qualifiers.join(" and ")}`
  if (own.type === "integer") return "an integer"
  return annotation(ast, AST.getDescriptionAnnotation) ?? annotation(ast, AST.getTitleAnnotation) ?? "a valid value"
}

interface Noun {
  readonly noun: string
  /** What a length counts: characters of a string, items of an array. */
  readonly unit: "character" | "item"
}

/** The noun of what a refinement chain refines; an integer check earlier in the chain makes it "an integer". */
const baseNoun = (ast: AST.Refinement, depth: number): Noun => {
  let integer = false
  let from: AST.AST = ast.from
  while (AST.isRefinement(from)) {
    if (constraintsOf(from)?.type === "integer") integer = true
    from = from.from
  }
  const noun = integer ? "an integer" : expectation(from, depth + 1)
  return { noun, unit: AST.isTupleType(from) ? "item" : "character" }
}

const numberQualifiers = (c: Constraints): ReadonlyArray<string> => {
  const qualifiers: Array<string> = []
  if (c.minimum !== undefined && c.maximum !== undefined) qualifiers.push(`from ${c.minimum} to ${c.maximum}`)
  else if (c.minimum !== undefined) qualifiers.push(`of at least ${c.minimum}`)
  else if (c.maximum !== undefined) qualifiers.push(`of at most ${c.maximum}`)
  if (c.exclusiveMinimum !== undefined) qualifiers.push(`greater than ${c.exclusiveMinimum}`)
  if (c.exclusiveMaximum !== undefined) qualifiers.push(`less than ${c.exclusiveMaximum}`)
  if (c.multipleOf !== undefined) qualifiers.push(`that is a multiple of ${c.multipleOf}`)
  return qualifiers
}

const count = (n: unknown, unit: string): string => `${n} ${unit}${n === 1 ? "" : "s"}`

const lengthQualifiers = (c: Constraints, unit: Noun["unit"]): ReadonlyArray<string> => {
  const min = c.minLength ?? c.minItems
  const max = c.maxLength ?? c.maxItems
  if (min !== undefined && max !== undefined) return [min === max ? `of exactly ${count(min, unit)}` : `of ${min} to ${count(max, unit)}`]
  if (min !== undefined) return [`of at least ${count(min, unit)}`]
  if (max !== undefined) return [`of at most ${count(max, unit)}`]
  return []
}

const textQualifiers = (c: Constraints): ReadonlyArray<string> => {
  const qualifiers: Array<string> = []
  if (typeof c.pattern === "string") qualifiers.push(`matching ${c.pattern}`)
  if (typeof c.format === "string") qualifiers.push(`in ${c.format} format`)
  return qualifiers
}
