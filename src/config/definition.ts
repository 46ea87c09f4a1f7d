import type {
  AnyQueryConfig,
  AuthFailureLimitOptions,
  AuthStrategy,
  CorsOptions,
  DocsOptions,
  MetricsOptions,
  McpOptions,
  OpenApiOptions,
  ResultCacheOptions,
  ServeConfig,
  ServeContextFactory,
  ServeLifecycleHooks,
  ServeMiddleware,
  ServeQueriesMap,
  ServeQueryEntry,
  TenantConfig
} from "../domain/config.js"
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
  readonly docs: Required<Pick<DocsOptions, "enabled" | "path">> & DocsOptions
  readonly openapi: Required<Pick<OpenApiOptions, "enabled" | "path">> & OpenApiOptions
  /** undefined when metrics are off. */
  readonly metrics: MetricsPlan | undefined
  /** The MCP endpoint's options; undefined when it is not served. */
  readonly mcp: (Required<Pick<McpOptions, "path">> & McpOptions) | undefined
  /** The URL `start()` listens on, once it does: the OpenAPI document's default server. */
  readonly listening: { url: string | undefined }
  /** Undefined when the result cache is off. */
  readonly resultCache: ResultCacheOptions | undefined
}

/** `metrics` with its defaults applied and checked. */
export interface MetricsPlan {
  /** The route's full path (`basePath` + `path`). */
  readonly path: string
  readonly public: boolean
  readonly roles: ReadonlyArray<string>
  readonly buckets: ReadonlyArray<number>
}

/** Seconds: sub-millisecond cache hits up to the default 30 s request timeout. */
export const DEFAULT_DURATION_BUCKETS: ReadonlyArray<number> = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export const DEFAULT_BASE_PATH = "/api/analytics"

/** `/api/` + `/x/` → `/api/x`: one slash between parts, none at the end. */
export const joinPath = (...parts: ReadonlyArray<string>): string => {
  const joined = parts.map((part) => part.replace(/^\/+|\/+$/g, "")).filter((part) => part.length > 0).join("/")
  return `/${joined}`
}

const toList = <A>(value: A | ReadonlyArray<A> | undefined): Array<A> =>
  value === undefined ? [] : Array.isArray(value) ? [...(value as ReadonlyArray<A>)] : [value as A]

export const toQueryConfig = (entry: ServeQueryEntry): AnyQueryConfig =>
  typeof entry === "function" ? { query: entry } : entry

/** Throws for options that contradict each other, at define time rather than at the first scrape. */
const normalizeMetrics = (basePath: string, metrics: boolean | MetricsOptions | undefined): MetricsPlan | undefined => {
  if (metrics === undefined || metrics === false) return undefined
  const options: MetricsOptions = metrics === true ? {} : metrics
  const roles = options.roles ?? []
  if (options.public === true && roles.length > 0) {
    throw new Error("metrics: `roles` needs an authenticated caller; it cannot be combined with `public: true`")
  }
  const buckets = options.buckets ?? DEFAULT_DURATION_BUCKETS
  if (buckets.length === 0 || buckets.some((bound, i) => !(Number.isFinite(bound) && bound > 0 && (i === 0 || bound > buckets[i - 1]!)))) {
    throw new Error("metrics: `buckets` must be positive, finite and strictly increasing")
  }
  return { path: joinPath(basePath, options.path ?? "/metrics"), public: options.public === true, roles, buckets }
}

const normalizeMcp = (mcp: boolean | McpOptions | undefined): ServeDefinition["mcp"] => {
  if (mcp === undefined || mcp === false) return undefined
  const options = mcp === true ? {} : mcp
  return { ...options, path: options.path ?? "/mcp" }
}

export const normalizeConfig = (config: ServeConfig<ServeQueriesMap, never, never>): ServeDefinition => {
  const queries = new Map<string, AnyQueryConfig>()
  for (const [key, entry] of Object.entries(config.queries)) queries.set(key, toQueryConfig(entry))
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
    docs: { ...config.docs, enabled: config.docs?.enabled ?? true, path: config.docs?.path ?? "/docs" },
    openapi: { ...config.openapi, enabled: config.openapi?.enabled ?? true, path: config.openapi?.path ?? "/openapi.json" },
    metrics: normalizeMetrics(basePath, config.metrics),
    mcp: normalizeMcp(config.mcp),
    listening: { url: undefined },
    resultCache: config.resultCache === true ? {} : config.resultCache === false ? undefined : config.resultCache
  }
}
