import type { EndpointInfo, ServeMiddleware } from "../domain/config.js"
import { encodesToNothing } from "../domain/effectJsonSchema.js"
import { type JsonSchema, objectProperties, typesOf } from "../domain/jsonSchema.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { emptyRecord } from "../domain/queryString.js"
import { type CompiledSchema, isStandardSchema, type ServeSchema } from "../domain/schema.js"
import type { RoutePlan } from "../stages/plan.js"
import { type SecurityScheme, securitySchemeOf } from "./securityScheme.js"

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

const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"])

// Any handler can fail (500), lose its database (503) or time out under `start()` (504).
const ALWAYS_POSSIBLE = [500, 503, 504]

const errorStatusesOf = (route: RoutePlan): ReadonlyArray<number> => {
  const plan = route.endpoint
  const statuses = new Set(ALWAYS_POSSIBLE)
  const hasBody = BODY_METHODS.has(route.method)
  if (hasBody || plan.config.inputSchema !== undefined) statuses.add(400)
  if (hasBody) statuses.add(413)
  // Asked by Accept (any method) or a GET's suffix route for CSV or NDJSON, when the result is not a list of rows.
  statuses.add(406)
  if (plan.requiresAuth || plan.strategies.length > 0) statuses.add(401)
  // A tenant-scoped endpoint refuses callers without a tenant, unless it lets every one of them through.
  const tenantRefuses = plan.tenant !== undefined && (plan.tenant.required || plan.tenant.allowUnscoped !== undefined)
  if (plan.requiredRoles.length > 0 || plan.requiredScopes.length > 0 || tenantRefuses) statuses.add(403)
  if (plan.countsAuthFailures) statuses.add(429)
  for (const middleware of plan.middlewares) {
    for (const status of (middleware as DocumentedMiddleware).errorStatuses ?? []) statuses.add(status)
  }
  return [...statuses].sort((a, b) => a - b)
}

/** The JSON Schema says `{}` fails: it takes no object, or an object with a required property. */
export const refusesEmptyObject = (schema: JsonSchema | undefined): boolean => {
  if (schema === undefined) return false
  const types = typesOf(schema, schema)
  if (types.size > 0 && !types.has("object")) return true
  return [...(objectProperties(schema, schema)?.values() ?? [])].some((property) => property.required)
}

/** The validator refuses what a request without input reads as: an empty query string, so `{}` (`undefined` for a schema for nothing). */
const decoderRefusesNoInput = (input: CompiledSchema): boolean => {
  try {
    const decoded = input.decode(input.coerce(emptyRecord()))
    // An asynchronous answer comes too late for a document built synchronously: judged by the JSON Schema alone.
    if (isPromiseLike(decoded)) decoded.then(undefined, () => undefined)
    return false
  } catch {
    return true
  }
}

/**
 * Whether a request without input is refused. The JSON Schema tells when it refuses `{}`; when it
 * would let `{}` through, or there is none, the validator is asked (a refinement, a schema for
 * nothing, a validator without JSON Schema): one decode, and only there, since a refusal costs an error.
 */
const refusesNoInput = (input: CompiledSchema): boolean => refusesEmptyObject(input.jsonSchema()) || decoderRefusesNoInput(input)

// A schema is an Effect Schema or a Standard Schema (`compileSchema` refuses anything else).
const isNothing = (schema: ServeSchema | undefined): boolean =>
  schema !== undefined && !isStandardSchema(schema) && encodesToNothing(schema)

/** Describes every route of a compiled API; JSON Schemas come from the per-schema cache. */
export const describeRoutes = (routes: ReadonlyArray<RoutePlan>): ReadonlyArray<ServeEndpoint> =>
  routes.map((route) => {
    const plan = route.endpoint
    return {
      ...plan.info,
      path: route.path,
      method: route.method,
      inputSchema: plan.input.jsonSchema(),
      outputSchema: plan.output.jsonSchema(),
      securitySchemes: plan.strategies.map(securitySchemeOf),
      errorStatuses: errorStatusesOf(route),
      responseHeaders: [
        ...new Set([
          ...(plan.resultCached ? ["X-Cache"] : []),
          ...plan.middlewares.flatMap((middleware) => (middleware as DocumentedMiddleware).responseHeaders ?? [])
        ])
      ],
      inputRequired: refusesNoInput(plan.input),
      outputIsNothing: isNothing(plan.config.outputSchema)
    }
  })
