import type { EndpointInfo, ServeMiddleware } from "../domain/config.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import type { RoutePlan } from "../pipeline/plan.js"
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
      ]
    }
  })
