import type {
  AnyQueryConfig,
  AuthFailureLimitOptions,
  AuthStrategy,
  CorsOptions,
  DocsOptions,
  OpenApiOptions,
  ServeConfig,
  ServeContextFactory,
  ServeLifecycleHooks,
  ServeMiddleware,
  ServeQueriesMap,
  ServeQueryEntry,
  TenantConfig
} from "./config.js"
import type { HttpMethod } from "./http.js"

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
  /** The URL `start()` listens on, once it does: the OpenAPI document's default server. */
  readonly listening: { url: string | undefined }
}

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

export const normalizeConfig = (config: ServeConfig<ServeQueriesMap, never, never>): ServeDefinition => {
  const queries = new Map<string, AnyQueryConfig>()
  for (const [key, entry] of Object.entries(config.queries)) queries.set(key, toQueryConfig(entry))
  return {
    basePath: joinPath(config.basePath ?? DEFAULT_BASE_PATH),
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
    listening: { url: undefined }
  }
}
