import type { ServeDefinition } from "../config/definition.js"
import type { AnyQueryConfig, AuthStrategy, EndpointInfo, ServeMiddleware } from "../domain/config.js"
import { answersDatasetPages } from "../datasets/endpoints.js"
import { joinPath } from "../domain/paths.js"
import { withApiStore } from "../middleware/rateLimit.js"
import type { RateLimitStoreService } from "../services/RateLimitStore.js"
import { compileSchema } from "../domain/schema.js"
import { credentialVary } from "../stages/credentialVary.js"
import { InputMemo } from "../stages/inputMemo.js"
import { toInvoker } from "../stages/invoke.js"
import type { EndpointPlan, RoutePlan } from "../stages/plan.js"
import { withRowStreams } from "../stages/rowStream.js"
import { compileTenant, type TenantPlan } from "../tenancy/tenantPlan.js"
import { pagedInput, pagedInvoker, pagedOutput, pagePlanOf } from "../pagination/endpoint.js"

const toList = <A>(value: A | ReadonlyArray<A> | null | undefined): ReadonlyArray<A> =>
  value === undefined || value === null ? [] : Array.isArray(value) ? (value as ReadonlyArray<A>) : [value as A]

const isPublicConfig = (config: AnyQueryConfig): boolean => config.auth === null || config.requiresAuth === false

/**
 * The endpoint's tenant config merged over the global one, or undefined when it is not tenant-scoped.
 * A public endpoint has no caller to take a tenant from: it is scoped only by a tenant config of its own.
 * Throws on a config that cannot work (see `compileTenant`).
 */
const endpointTenant = (definition: ServeDefinition, key: string, config: AnyQueryConfig): TenantPlan | undefined =>
  config.tenant === false || (config.tenant === undefined && (isPublicConfig(config) || definition.tenant === undefined))
    ? undefined
    : compileTenant(`query "${key}"`, config.tenant, definition.tenant)

/** Throws, with what to change, on a tenant config that would fail or leak at request time. */
export const checkTenantConfigs = (definition: ServeDefinition): void => {
  if (definition.tenant !== undefined) compileTenant("the global tenant config", undefined, definition.tenant)
  for (const [key, config] of definition.queries) endpointTenant(definition, key, config)
}

/** `Vary` of an answer that depends on the caller's `credentials` headers ("" for one that does not). */
const answerVary = (credentials: string): EndpointPlan["vary"] => ({
  fixed: credentials,
  negotiated: credentials === "" ? "Accept" : `Accept, ${credentials}`
})

/** `rateLimitStore`: the API's RateLimitStore, where its middlewares without a store of their own count. */
const compileEndpoint = (
  definition: ServeDefinition,
  key: string,
  config: AnyQueryConfig,
  rateLimitStore: RateLimitStoreService
): EndpointPlan => {
  const isPublic = isPublicConfig(config)
  const ownStrategies = toList(config.auth as AuthStrategy | ReadonlyArray<AuthStrategy> | null | undefined)
  const strategies = isPublic ? [] : [...ownStrategies, ...definition.strategies]
  const requiredRoles = config.requiredRoles ?? []
  const requiredScopes = config.requiredScopes ?? []
  const requiresAuth = config.requiresAuth ??
    (!isPublic && (strategies.length > 0 || requiredRoles.length > 0 || requiredScopes.length > 0))
  const tenant = endpointTenant(definition, key, config)
  const credentials = credentialVary(strategies)
  const resultCached = definition.resultCache !== undefined && config.cacheTtlMs !== undefined && config.cacheTtlMs !== null && config.cacheTtlMs > 0
  const info: EndpointInfo = {
    key,
    name: config.name ?? key,
    path: joinPath(definition.basePath, config.path ?? key),
    method: config.method ?? "GET",
    requiresAuth,
    requiredRoles,
    requiredScopes,
    summary: config.summary,
    description: config.description,
    tags: config.tags ?? [],
    cacheTtlMs: config.cacheTtlMs ?? null,
    custom: config.custom
  }
  const page = pagePlanOf(key, config.paginate)
  const input = compileSchema(config.inputSchema, "input")
  const output = compileSchema(config.outputSchema, "output")
  const invoke = toInvoker(config.query)
  return {
    info,
    config,
    strategies,
    requiresAuth,
    requiredRoles,
    requiredScopes,
    verboseAuthErrors: definition.verboseAuthErrors,
    tenant,
    countsAuthFailures: definition.authFailureLimit !== undefined && strategies.length > 0,
    credentialVary: credentials,
    vary: answerVary(requiresAuth || tenant !== undefined ? (credentials ?? "") : ""),
    input: page === undefined ? input : pagedInput(key, page, input),
    output: page === undefined ? withRowStreams(output, config.outputSchema !== undefined) : pagedOutput(output),
    middlewares: [...definition.middlewares, ...((config.middlewares ?? []) as ReadonlyArray<ServeMiddleware>)].map((middleware) =>
      withApiStore(middleware, rateLimitStore)
    ),
    invoke: page === undefined ? invoke : pagedInvoker(key, invoke),
    resultCached,
    inputMemo: resultCached ? new InputMemo() : undefined,
    page,
    answersPages: page !== undefined || answersDatasetPages(config)
  }
}

export const compileRoutes = (definition: ServeDefinition, rateLimitStore: RateLimitStoreService): ReadonlyArray<RoutePlan> => {
  const plans = new Map<string, EndpointPlan>()
  for (const [key, config] of definition.queries) plans.set(key, compileEndpoint(definition, key, config, rateLimitStore))
  const routes: Array<RoutePlan> = []
  for (const endpoint of plans.values()) {
    routes.push({ method: endpoint.info.method, path: endpoint.info.path, endpoint })
  }
  for (const route of definition.routes) {
    const endpoint = plans.get(route.key)
    if (endpoint === undefined) throw new Error(`route(): no query named "${route.key}"`)
    routes.push({ method: route.method, path: route.path, endpoint })
  }
  return routes
}
