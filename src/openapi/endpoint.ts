import type { EndpointInfo, ServeMiddleware } from "../domain/config.js"
import { type JsonSchema, objectProperties, typesOf } from "../domain/jsonSchema.js"
import type { SecurityScheme } from "./securityScheme.js"

/**
 * One route as tooling sees it: `describe()` returns these, `buildOpenApiDocument` reads them.
 * `path` and `method` are the route's (an endpoint with extra `builder.route`s has several).
 */
export interface ServeEndpoint extends EndpointInfo {
  /** JSON Schema of what callers send; undefined when the endpoint accepts anything. */
  readonly inputSchema: JsonSchema | undefined
  /** JSON Schema of what callers receive; undefined when it is not declared. */
  readonly outputSchema: JsonSchema | undefined
  /** How callers may authenticate, any one of them; empty on public endpoints. */
  readonly securitySchemes: ReadonlyArray<SecurityScheme>
  /** The error statuses the route can answer with, ascending. */
  readonly errorStatuses: ReadonlyArray<number>
  /** Headers its middlewares set on every answer (`X-RateLimit-*` behind `rateLimit`). */
  readonly responseHeaders: ReadonlyArray<string>
  /**
   * A request that sends no input (no body, no query string) fails validation. `describe()` always
   * sets it; left out (an endpoint built by hand), the input's JSON Schema alone decides.
   */
  readonly inputRequired?: boolean
  /** The output schema is one for nothing (Effect `Schema.Void`, `Schema.Undefined`): answers are 204, without a body. */
  readonly outputIsNothing?: boolean
}

/**
 * The convention by which a middleware documents the errors it answers with and the headers it sets
 * (`rateLimit`: 429 and `X-RateLimit-*`); the pipeline cannot see inside a middleware.
 */
export type DocumentedMiddleware = ServeMiddleware & {
  readonly errorStatuses?: ReadonlyArray<number>
  readonly responseHeaders?: ReadonlyArray<string>
}

/** The JSON Schema says `{}` fails: it takes no object, or an object with a required property. */
export const refusesEmptyObject = (schema: JsonSchema | undefined): boolean => {
  if (schema === undefined) return false
  const types = typesOf(schema, schema)
  if (types.size > 0 && !types.has("object")) return true
  return [...(objectProperties(schema, schema)?.values() ?? [])].some((property) => property.required)
}
