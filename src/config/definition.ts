import type { AnyQueryConfig, AuthStrategy, ServeContextFactory, ServeMiddleware, ServeQueriesMap, ServeQueryEntry, TenantConfig } from "../domain/config.js"
import type { ServeLifecycleHooks } from "../stages/lifecycle.js"
import type { ResultCacheOptions } from "../cache/options.js"
import { type McpPlan, normalizeMcp } from "../mcp/options.js"
import { type MetricsPlan, normalizeMetrics } from "../metrics/options.js"
import { DEFAULT_BASE_PATH, joinPath } from "../domain/paths.js"
import type { AuthFailureLimitOptions } from "../auth/options.js"
import type { CorsOptions } from "../stages/cors.js"
import type { OpenApiPlan } from "../openapi/options.js"
import type { DocsPlan } from "../docs/options.js"
import { datasetEndpoints } from "../datasets/endpoints.js"
import type { DatasetModel } from "../datasets/model.js"
import type { ServeConfig } from "./ServeConfig.js"
import type { HttpMethod } from "../domain/http.js"

/** An extra path/method for an existing endpoint (`builder.route`). */
export interface RouteDefinition {
  readonly key: string
  readonly path: string
  readonly method: HttpMethod
}

/**
 * A ServeConfig normalised once: defaults applied, bare functions wrapped, strategies as a list.
 * The builder's `use`, `useAuth` and `route` append to it; the pipeline recompiles its plans then.
 */
export interface ServeDefinition {
  readonly basePath: string
  readonly queries: ReadonlyMap<string, AnyQueryConfig>
  readonly routes: Array<RouteDefinition>
  readonly middlewares: Array<ServeMiddleware>
  readonly strategies: Array<AuthStrategy>
  readonly tenant: TenantConfig | undefined
  readonly context: ServeContextFactory<Readonly<Record<string, unknown>>> | undefined
  readonly hooks: ServeLifecycleHooks
  readonly cors: true | CorsOptions | undefined
  readonly authFailureLimit: AuthFailureLimitOptions | undefined
  /** `security.verboseAuthErrors`: a 403 tells the caller its own roles or scopes. */
  readonly verboseAuthErrors: boolean
  readonly docs: DocsPlan
  readonly openapi: OpenApiPlan
  /** undefined when metrics are off. */
  readonly metrics: MetricsPlan | undefined
  /** The MCP endpoint's options; undefined when it is not served. */
  readonly mcp: McpPlan | undefined
  /** The URL `start()` listens on, once it does: the OpenAPI document's default server. */
  readonly listening: { url: string | undefined }
  /** Undefined when the result cache is off. */
  readonly resultCache: ResultCacheOptions | undefined
}

const toList = <A>(value: A | ReadonlyArray<A> | undefined): Array<A> =>
  value === undefined ? [] : Array.isArray(value) ? [...(value as ReadonlyArray<A>)] : [value as A]

const toQueryConfig = (entry: ServeQueryEntry): AnyQueryConfig =>
  typeof entry === "function" ? { query: entry } : entry

/** The query configs that serve `config.datasets`, checked: a dataset that could not work is an Error here. */
const datasetQueries = (config: ServeConfig<ServeQueriesMap, never, never>): ReadonlyMap<string, AnyQueryConfig> => {
  const datasets = new Map<string, DatasetModel>()
  for (const [key, dataset] of Object.entries(config.datasets ?? {})) {
    if (dataset.name !== key) throw new Error(`datasets: the dataset "${dataset.name}" is given under the key "${key}"; give it under its own name`)
    if (dataset.tenantKey !== undefined && config.tenant === undefined) {
      throw new Error(`datasets: "${key}" has a tenantKey, but the API has no tenant config to take the caller's tenant from: add tenant: { extract: (auth) => auth?.tenantId }`)
    }
    datasets.set(key, dataset)
  }
  if (datasets.size === 0) return new Map()
  if (config.sql === undefined) throw new Error("datasets: give `sql`, the SqlExecutor that runs their statements")
  const endpoints = datasetEndpoints({ datasets, executor: config.sql, tenant: config.tenant as TenantConfig | undefined })
  for (const key of endpoints.keys()) {
    if (key in config.queries) throw new Error(`datasets: the query key "${key}" is taken by the datasets' routes; rename the query`)
  }
  return endpoints
}

export const normalizeConfig = (config: ServeConfig<ServeQueriesMap, never, never>): ServeDefinition => {
  const queries = new Map<string, AnyQueryConfig>()
  for (const [key, entry] of Object.entries(config.queries)) queries.set(key, toQueryConfig(entry))
  for (const [key, endpoint] of datasetQueries(config)) queries.set(key, endpoint)
  const basePath = joinPath(config.basePath ?? DEFAULT_BASE_PATH)
  return {
    basePath,
    queries,
    routes: [],
    middlewares: [...(config.middlewares ?? [])] as Array<ServeMiddleware>,
    strategies: toList(config.auth) as Array<AuthStrategy>,
    tenant: config.tenant as TenantConfig | undefined,
    context: config.context as ServeContextFactory<Readonly<Record<string, unknown>>> | undefined,
    hooks: config.hooks ?? {},
    cors: config.cors,
    authFailureLimit: config.authFailureLimit,
    verboseAuthErrors: config.security?.verboseAuthErrors === true,
    docs: { ...config.docs, enabled: config.docs?.enabled ?? true, path: config.docs?.path ?? "/docs" },
    openapi: { ...config.openapi, enabled: config.openapi?.enabled ?? true, path: config.openapi?.path ?? "/openapi.json" },
    metrics: normalizeMetrics(basePath, config.metrics),
    mcp: normalizeMcp(config.mcp),
    listening: { url: undefined },
    resultCache: config.resultCache === true ? {} : config.resultCache === false ? undefined : config.resultCache
  }
}
