import { typesOf } from "../domain/jsonSchema.js"
import type { SchemaComponents } from "./components.js"
import type { ServeEndpoint } from "./endpoint.js"
import { errorResponseName } from "./errorResponses.js"
import type { HeaderComponents } from "./headers.js"

// Output formats an endpoint with a list result also answers in: negotiated by Accept (any method), or fixed by a GET's route suffix.
const LIST_FORMATS: ReadonlyArray<readonly [mediaType: string, suffix: string]> = [
  ["text/csv", ".csv"],
  ["application/x-ndjson", ".ndjson"]
]

export const NOT_MODIFIED = "NotModified"

/**
 * `components.responses.NotModified`: what a matching If-None-Match gets. If-None-Match is not listed
 * as a parameter: HTTP clients and caches send it themselves, and reference pages would put an empty
 * one into every example request.
 */
export const notModifiedResponse = (headers: HeaderComponents) => ({
  description: "Not modified: the answer has not changed since the ETag sent in If-None-Match. No body.",
  headers: headers.refs(["ETag", "Cache-Control", "X-Request-Id"])
})

/** The 200 (and, where answers carry an ETag, 304) of an operation, then a reference per error status. */
export const operationResponses = (
  endpoint: ServeEndpoint,
  operationId: string,
  schemas: SchemaComponents,
  headers: HeaderComponents
): Record<string, unknown> => {
  const output = endpoint.outputSchema === undefined ? {} : schemas.embed(endpoint.outputSchema, `${operationId}Output`)
  const content: Record<string, unknown> = { "application/json": { schema: output } }
  let description = "Successful response."
  const types = typesOf(output, schemas.root)
  if (types.size === 1 && types.has("array")) {
    for (const [mediaType] of LIST_FORMATS) content[mediaType] = { schema: { type: "string" } }
    if (endpoint.method === "GET") {
      const [csv, ndjson] = LIST_FORMATS.map(([, suffix]) => `\`${endpoint.path}${suffix}\``)
      description += ` Also served as CSV at ${csv} and as NDJSON at ${ndjson}, whatever Accept says.`
    }
  }
  const { cacheTtlMs } = endpoint
  const names = ["X-Request-Id", ...endpoint.responseHeaders]
  if (cacheTtlMs !== null) names.push("Cache-Control")
  if (revalidates(endpoint)) names.push("ETag")
  const responses: Record<string, unknown> = { "200": { description, headers: headers.refs(names), content } }
  if (revalidates(endpoint)) responses["304"] = { $ref: `#/components/responses/${NOT_MODIFIED}` }
  for (const status of endpoint.errorStatuses) responses[String(status)] = { $ref: `#/components/responses/${errorResponseName(status)}` }
  return responses
}

/** Answers carry an ETag, and a matching If-None-Match gets 304, when they may be cached for a while. */
export const revalidates = (endpoint: ServeEndpoint): boolean => endpoint.cacheTtlMs !== null && endpoint.cacheTtlMs > 0
