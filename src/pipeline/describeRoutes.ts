import { encodesToNothing } from "../domain/effectJsonSchema.js"
import { isPromiseLike } from "../domain/maybePromise.js"
import { emptyRecord } from "../domain/queryString.js"
import { type CompiledSchema, isStandardSchema, type ServeSchema } from "../domain/schema.js"
import { type DocumentedMiddleware, refusesEmptyObject, type ServeEndpoint } from "../openapi/endpoint.js"
import { securitySchemeOf } from "../openapi/securityScheme.js"
import type { RoutePlan } from "../stages/plan.js"

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
          ...(plan.page !== undefined && (route.method === "GET" || route.method === "HEAD") ? ["Link"] : []),
          ...plan.middlewares.flatMap((middleware) => (middleware as DocumentedMiddleware).responseHeaders ?? [])
        ])
      ],
      inputRequired: refusesNoInput(plan.input),
      outputIsNothing: isNothing(plan.config.outputSchema)
    }
  })
