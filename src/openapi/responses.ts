import { arrayItemsOf, type JsonSchema, type JsonType, objectProperties, otherPropertiesOf, typesOf } from "../domain/jsonSchema.js"
import type { SchemaComponents } from "./components.js"
import type { ServeEndpoint } from "./endpoint.js"
import { errorResponseName } from "./errorResponses.js"
import type { HeaderComponents } from "./headers.js"

/**
 * Whether a format is offered for an operation's results: `sure` when its output schema says every
 * result fits, `unsure` when the schema does not say, `no` when it allows results that do not fit.
 */
type Offer = "sure" | "unsure" | "no"

const LIST: ReadonlySet<JsonType> = new Set(["array"])
const ROW: ReadonlySet<JsonType> = new Set(["object"])
// What a CSV cell holds (see `toCsv`): a Date is a string on the wire.
const CELL: ReadonlySet<JsonType> = new Set(["string", "number", "integer", "boolean", "null"])

const NO_TYPES: ReadonlySet<JsonType> = new Set()

/** Whether every value of a schema that admits `types` is of one of the `allowed` types. */
const offerFor = (types: ReadonlySet<JsonType>, allowed: ReadonlySet<JsonType>): Offer => {
  if (types.size === 0) return "unsure"
  return [...types].every((type) => allowed.has(type)) ? "sure" : "no"
}

const offerOf = (schema: JsonSchema, root: JsonSchema, allowed: ReadonlySet<JsonType>): Offer => offerFor(typesOf(schema, root), allowed)

const leastOf = (offers: ReadonlyArray<Offer>): Offer => (offers.includes("no") ? "no" : offers.includes("unsure") ? "unsure" : "sure")

/** The schemas of a list's elements; undefined when it does not describe them. */
const elementsOf = (list: JsonSchema, root: JsonSchema): ReadonlyArray<JsonSchema> | undefined => {
  const described = arrayItemsOf(list, root)
  if (described === undefined) return undefined
  return described.items === undefined ? described.prefixItems : [...described.prefixItems, described.items]
}

/** The schemas of a row's values, named or not; undefined when it describes none of its keys. */
const cellsOf = (row: JsonSchema, root: JsonSchema): ReadonlyArray<JsonSchema> | undefined => {
  const named = objectProperties(row, root)
  const others = otherPropertiesOf(row, root)
  if (named === undefined && others === undefined) return undefined
  const cells = [...(named?.values() ?? [])].map((property) => property.schema)
  for (const [, schema] of others?.patternProperties ?? []) cells.push(schema)
  if (others?.additionalProperties !== undefined) cells.push(others.additionalProperties)
  return cells
}

/** What the document knows of an operation's results: its output schema (embedded), and the JSON types it admits. */
interface Output {
  readonly schema: JsonSchema | undefined
  readonly types: ReadonlySet<JsonType>
  /** What the schema's references resolve against. */
  readonly root: JsonSchema
}

/** NDJSON holds a list: one JSON text per element. */
const ndjsonOffer = ({ types }: Output): Offer => offerFor(types, LIST)

/** Whether a list element is a row: an object whose values are all cells. */
const rowOffer = (row: JsonSchema, root: JsonSchema): Offer => {
  const isObject = offerOf(row, root, ROW)
  if (isObject !== "sure") return isObject
  const cells = cellsOf(row, root)
  return cells === undefined ? "unsure" : leastOf(cells.map((cell) => offerOf(cell, root, CELL)))
}

/** CSV holds a list of rows, as the server's CSV writer requires (`toCsv`). */
const csvOffer = ({ schema, types, root }: Output): Offer => {
  const list = offerFor(types, LIST)
  if (schema === undefined || list !== "sure") return list
  const rows = elementsOf(schema, root)
  return rows === undefined ? "unsure" : leastOf(rows.map((row) => rowOffer(row, root)))
}

interface ListFormat {
  readonly name: string
  readonly mediaType: string
  /** The suffix of the GET route that answers in this format whatever Accept says. */
  readonly suffix: string
  /** What a result must be for the format to hold it. */
  readonly fits: string
  readonly offer: (output: Output) => Offer
}

// Output formats besides JSON: negotiated by Accept (any method), or fixed by a GET's route suffix.
const LIST_FORMATS: ReadonlyArray<ListFormat> = [
  { name: "CSV", mediaType: "text/csv", suffix: ".csv", fits: "a list of objects with flat values", offer: csvOffer },
  { name: "NDJSON", mediaType: "application/x-ndjson", suffix: ".ndjson", fits: "a list", offer: ndjsonOffer }
]

/**
 * The sentence that names the formats offered: a GET's suffix routes; for formats the schema cannot
 * promise, what the result must be, else 406. A sure format of another method needs no words: its media type says it.
 */
const formatsNote = (endpoint: ServeEndpoint, formats: ReadonlyArray<ListFormat>, sure: boolean): string => {
  const isGet = endpoint.method === "GET"
  if (formats.length === 0 || (sure && !isGet)) return ""
  const where = formats.map((format) => (isGet ? `as ${format.name} at \`${endpoint.path}${format.suffix}\`` : `as ${format.name}`)).join(" and ")
  const how = isGet ? ", whatever Accept says" : " when Accept asks"
  if (sure) return ` Also served ${where}${how}.`
  const fits = formats.map((format) => `${format.name}: ${format.fits}`).join("; ")
  return ` Also served ${where}${how}, if the result has that form (${fits}); otherwise 406.`
}

/** The 200: the output schema as JSON, and the list formats the result is or may be given in. */
const okResponse = (endpoint: ServeEndpoint, output: Output, headers: Record<string, unknown>) => {
  const content: Record<string, unknown> = { "application/json": { schema: output.schema ?? {} } }
  const sure: Array<ListFormat> = []
  const unsure: Array<ListFormat> = []
  for (const format of LIST_FORMATS) {
    const offer = format.offer(output)
    if (offer === "no") continue
    content[format.mediaType] = { schema: { type: "string" } }
    ;(offer === "sure" ? sure : unsure).push(format)
  }
  const description = `Successful response.${formatsNote(endpoint, sure, true)}${formatsNote(endpoint, unsure, false)}`
  return { description, headers, content }
}

/** A success answer several operations share when they send the same headers with it. */
interface SharedResponse {
  readonly name: string
  readonly status: number
  readonly description: string
  readonly headers: ReadonlyArray<string>
}

const NO_CONTENT: SharedResponse = {
  name: "NoContent",
  status: 204,
  description: "No content: the handler returned nothing. No body.",
  headers: ["X-Request-Id", "Vary"]
}

/**
 * What a matching If-None-Match gets. If-None-Match is not listed as a parameter: HTTP clients and
 * caches send it themselves, and reference pages would put an empty one into every example request.
 */
const NOT_MODIFIED: SharedResponse = {
  name: "NotModified",
  status: 304,
  description: "Not modified: the answer has not changed since the ETag sent in If-None-Match. No body.",
  headers: ["X-Request-Id", "Cache-Control", "ETag", "Vary"]
}

/**
 * `components.responses` for success answers without a body (204, 304): an operation refers to the
 * shared one when its answer carries the same headers, and has its own otherwise (a middleware's
 * `X-RateLimit-*`, the result cache's `X-Cache`), so every header it sends is listed.
 */
export class SuccessResponses {
  private readonly used = new Set<SharedResponse>()

  constructor(private readonly headers: HeaderComponents) {}

  response(shared: SharedResponse, names: ReadonlyArray<string>): Record<string, unknown> {
    if (names.join() !== shared.headers.join()) return { description: shared.description, headers: this.headers.refs(names) }
    this.used.add(shared)
    return { $ref: `#/components/responses/${shared.name}` }
  }

  /** The shared responses operations refer to, in status order. */
  toJSON(): Record<string, unknown> {
    const responses: Record<string, unknown> = {}
    for (const shared of [...this.used].sort((a, b) => a.status - b.status)) {
      responses[shared.name] = { description: shared.description, headers: this.headers.refs(shared.headers) }
    }
    return responses
  }
}

/**
 * The headers of an endpoint's successful answers, in the order listed: its middlewares' (and the
 * result cache's), Cache-Control with a TTL, the ETag of answers with a body that may be reused, and
 * Vary, which Accept, credentials, CORS or compression may set on any of them.
 */
const successHeaders = (endpoint: ServeEndpoint, etag: boolean): Array<string> => {
  const names = ["X-Request-Id", ...endpoint.responseHeaders]
  if (endpoint.cacheTtlMs !== null) names.push("Cache-Control")
  if (etag) names.push("ETag")
  names.push("Vary")
  return names
}

/**
 * The success answers of an operation: 200, or 204 for an output of nothing (both when the output
 * schema does not say), 304 where answers carry an ETag; then a reference per error status.
 */
export const operationResponses = (
  endpoint: ServeEndpoint,
  operationId: string,
  schemas: SchemaComponents,
  headers: HeaderComponents,
  successes: SuccessResponses
): Record<string, unknown> => {
  const responses: Record<string, unknown> = {}
  const schema = endpoint.outputIsNothing === true || endpoint.outputSchema === undefined ? undefined : schemas.embed(endpoint.outputSchema, `${operationId}Output`)
  const output: Output = { schema, types: schema === undefined ? NO_TYPES : typesOf(schema, schemas.root), root: schemas.root }
  const etag = revalidates(endpoint)
  if (endpoint.outputIsNothing !== true) responses["200"] = okResponse(endpoint, output, headers.refs(successHeaders(endpoint, etag)))
  // No types: the schema says nothing of the values, so the handler may return nothing too.
  if (output.types.size === 0) responses["204"] = successes.response(NO_CONTENT, successHeaders(endpoint, false))
  if (etag) responses["304"] = successes.response(NOT_MODIFIED, successHeaders(endpoint, true))
  for (const status of endpoint.errorStatuses) responses[String(status)] = { $ref: `#/components/responses/${errorResponseName(status)}` }
  return responses
}

/** Answers carry an ETag, and a matching If-None-Match gets 304, when they have a body that may be cached for a while. */
const revalidates = (endpoint: ServeEndpoint): boolean => endpoint.outputIsNothing !== true && endpoint.cacheTtlMs !== null && endpoint.cacheTtlMs > 0
