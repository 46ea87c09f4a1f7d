import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { ResultCacheStore } from "../cache/ResultCacheStore.js"
import type { HttpMethod, ServeRequest } from "./http.js"
import type { MaybePromise } from "./maybePromise.js"
import type { ServeSchema } from "./schema.js"
import type { ServeQueryEvent } from "./event.js"
import type { RateLimitStoreService } from "../services/RateLimitStore.js"

/** What an AuthStrategy resolves a caller to. `roles` and `scopes` drive the guards. */
export interface ServeAuthContext {
  readonly roles?: ReadonlyArray<string>
  readonly scopes?: ReadonlyArray<string>
  readonly tenantId?: string
  readonly [key: string]: unknown
}

/** The public facts about one endpoint, as strategies, docs and `describe()` see them. */
export interface EndpointInfo {
  readonly key: string
  readonly name: string
  readonly path: string
  readonly method: HttpMethod
  readonly requiresAuth: boolean
  readonly requiredRoles: ReadonlyArray<string>
  readonly requiredScopes: ReadonlyArray<string>
  readonly summary: string | undefined
  readonly description: string | undefined
  readonly tags: ReadonlyArray<string>
  readonly cacheTtlMs: number | null
  readonly custom: Readonly<Record<string, unknown>> | undefined
}

/**
 * A function type checked bivariantly (method-style), so a query typed for a narrow input still fits
 * the queries map, whose entries accept any input.
 */
type Bivariant<Args extends ReadonlyArray<unknown>, R> = { bivariant(...args: Args): R }["bivariant"]

/** Resolves the caller from a request; `null` means "no credentials for me". Throwing means invalid credentials. */
export type AuthStrategy<TAuth extends ServeAuthContext = ServeAuthContext> = (args: {
  readonly request: ServeRequest
  readonly endpoint: EndpointInfo
}) => MaybePromise<TAuth | null>

export type TenantMode = "manual" | "auto-inject"

export interface TenantConfig<TAuth extends ServeAuthContext = ServeAuthContext> {
  /**
   * The caller's tenant id. A non-empty string is the id and a finite number becomes its string;
   * anything else (undefined, null, `""`, a boolean, an array, an object) means the caller has no tenant.
   */
  extract(auth: TAuth | null): unknown
  /** Column that auto-inject filters on. Default "tenant_id". */
  readonly column?: string
  /** "manual" (default): `ctx.tenantId` is set and the handler filters. "auto-inject": query builders are filtered for it. */
  readonly mode?: TenantMode
  /** Default true: a request without a tenant id is refused with 403 `missing_tenant`. */
  readonly required?: boolean
  /**
   * With `required: false`: which callers without a tenant may read every tenant's rows, e.g.
   * `(auth) => auth?.roles?.includes("admin") === true`. Anyone else without a tenant gets 403
   * `missing_tenant`; a caller with a tenant is filtered whatever this says. Required in auto-inject
   * mode with `required: false`, so unscoped access is always a decision written down.
   */
  allowUnscoped?(auth: TAuth | null): boolean
}

/** A query's own tenant config: each field it leaves out (`extract`, `column`, `mode`, ...) comes from the global one. */
export type TenantOverride<TAuth extends ServeAuthContext = ServeAuthContext> = Partial<TenantConfig<TAuth>>

/** The `ctx` that middlewares and handlers receive. */
export type ServeContext<TInput = unknown, TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}> = {
  readonly input: TInput
  readonly auth: TAuth | null
  readonly tenantId: string | null
  readonly request: ServeRequest
  readonly requestId: string
  readonly endpoint: EndpointInfo
  /** Per-request scratch space for middlewares. */
  readonly locals: Record<string, unknown>
  /** Aborts when the client disconnects or the request times out. */
  readonly signal: AbortSignal
  /** Overrides the endpoint's cache TTL for this response. */
  setCacheTtl(ms: number | null): void
  /** Adds a header to this response, success or error. */
  setHeader(name: string, value: string): void
} & TContext

export type ServeMiddleware<TInput = unknown, TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}> = Bivariant<
  [ctx: ServeContext<TInput, TAuth, TContext>, next: () => MaybePromise<unknown>],
  MaybePromise<unknown>
>

/** A handler result: a value, a promise, or an Effect whose services come from `config.layer`. */
export type QueryResult<TOutput> = MaybePromise<TOutput> | Effect.Effect<TOutput, unknown, unknown>

export type QueryResolver<TInput, TOutput, TCtx> = Bivariant<[args: { readonly input: TInput; readonly ctx: TCtx }], QueryResult<TOutput>>
/** The legacy positional form; recognised by declaring two parameters. */
export type LegacyQuery<TInput, TOutput, TCtx> = Bivariant<[input: TInput, ctx: TCtx], QueryResult<TOutput>>
export interface RunnableQuery<TInput, TOutput, TCtx> {
  readonly run: QueryResolver<TInput, TOutput, TCtx> | LegacyQuery<TInput, TOutput, TCtx>
}

export type ExecutableQuery<TInput = unknown, TOutput = unknown, TCtx = ServeContext<TInput>> =
  | QueryResolver<TInput, TOutput, TCtx>
  | LegacyQuery<TInput, TOutput, TCtx>
  | RunnableQuery<TInput, TOutput, TCtx>

/** Phantom record of the types a query exposes to callers: what they send and what they get back. */
export interface QueryTypes<TCallerInput, TWireOutput> {
  readonly input: TCallerInput
  readonly output: TWireOutput
}

export interface ServeQueryConfig<
  TInput = unknown,
  TOutput = unknown,
  TCallerInput = TInput,
  TWireOutput = TOutput,
  TAuth extends ServeAuthContext = ServeAuthContext,
  TContext = {}
> {
  readonly query: ExecutableQuery<TInput, TOutput, ServeContext<TInput, TAuth, TContext>>
  readonly method?: HttpMethod
  readonly name?: string
  readonly inputSchema?: ServeSchema
  readonly outputSchema?: ServeSchema
  readonly middlewares?: ReadonlyArray<ServeMiddleware<TInput, TAuth, TContext>>
  /** Overrides the global strategies; `null` makes the endpoint public. */
  readonly auth?: AuthStrategy<TAuth> | ReadonlyArray<AuthStrategy<TAuth>> | null
  readonly requiresAuth?: boolean
  readonly requiredRoles?: ReadonlyArray<string>
  readonly requiredScopes?: ReadonlyArray<string>
  /** Overrides fields of the global tenant config (the rest is inherited); `false` opts out. */
  readonly tenant?: TenantOverride<TAuth> | false
  readonly cacheTtlMs?: number | null
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly custom?: Readonly<Record<string, unknown>>
  /** `false` keeps the endpoint out of the MCP tools (it stays an HTTP endpoint). Default true. */
  readonly mcp?: boolean
  /** Carries the caller-facing types for `execute` and the typed client; never set at runtime. */
  readonly "~types"?: QueryTypes<TCallerInput, TWireOutput>
}

/** Any query definition, whatever its types. */
export type AnyQueryConfig = ServeQueryConfig<unknown, unknown, unknown, unknown, ServeAuthContext, {}>

/** A bare function entry is wrapped in a default configuration. */
export type ServeQueryEntry = AnyQueryConfig | QueryResolver<unknown, unknown, ServeContext> | LegacyQuery<unknown, unknown, ServeContext>
export type ServeQueriesMap = Readonly<Record<string, ServeQueryEntry>>

export type ServeContextFactory<TContext, TAuth extends ServeAuthContext = ServeAuthContext> =
  | TContext
  | ((args: { readonly request: ServeRequest; readonly auth: TAuth | null }) => MaybePromise<TContext>)

export interface ServeLifecycleHooks {
  readonly onRequestStart?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly method: string
    readonly path: string
    readonly request: ServeRequest
  }) => void
  readonly onRequestEnd?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly durationMs: number
    /** The status sent; 499 when the client closed the connection first (nothing was sent). */
    readonly status: number
    readonly result: unknown
  }) => void
  readonly onError?: (event: {
    readonly error: unknown
    readonly queryKey: string
    readonly requestId: string
    readonly durationMs: number
  }) => void
  /** Authentication failed (401): credentials missing or invalid. */
  readonly onAuthFailure?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly reason: string
    readonly request: ServeRequest
  }) => void
  /** An authenticated caller was refused (403): a missing role, scope or tenant. `required` lists the roles or scopes asked for. */
  readonly onAuthorizationFailure?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly reason: string
    readonly required: ReadonlyArray<string>
    readonly request: ServeRequest
  }) => void
}

export interface DocsOptions {
  readonly enabled?: boolean
  readonly path?: string
  readonly title?: string
}

export interface OpenApiOptions {
  readonly enabled?: boolean
  readonly path?: string
  readonly info?: {
    readonly title?: string
    readonly version?: string
    readonly description?: string
    readonly contact?: { readonly name?: string; readonly url?: string; readonly email?: string }
    /** SPDX `identifier` or `url`, not both. */
    readonly license?: { readonly name: string; readonly identifier?: string; readonly url?: string }
  }
  /** Variant shape: the document version directly on the options. */
  readonly version?: string
  readonly title?: string
  /**
   * Where clients reach the API (the document's `servers`). Default: the URL `start()` listens on,
   * or `/` (the document's own origin) before it has started, when it listens on every interface or
   * when another server runs the handler.
   */
  readonly servers?: ReadonlyArray<{ readonly url: string; readonly description?: string }>
  /** Descriptions of the tags operations use, in the order reference pages should list them. */
  readonly tags?: ReadonlyArray<{
    readonly name: string
    readonly description?: string
    readonly externalDocs?: { readonly url: string; readonly description?: string }
  }>
}

export interface CorsOptions {
  /**
   * Allowed origins: `"*"` (default), one origin, a list, or a predicate that returns `true`
   * (synchronously) for the origins it allows; one that throws refuses that origin.
   */
  readonly origin?: string | ReadonlyArray<string> | ((origin: string) => boolean)
  readonly methods?: ReadonlyArray<string>
  readonly allowedHeaders?: ReadonlyArray<string>
  readonly exposedHeaders?: ReadonlyArray<string>
  /**
   * Let browsers send cookies and read the answers. Needs an explicit `origin` (not `"*"`):
   * `defineServe` throws otherwise, since a credentialed wildcard lets any site read the answers.
   */
  readonly credentials?: boolean
  readonly maxAge?: number
}

/**
 * Throttles credential guessing: failed authentications (401 `invalid_credentials`) are counted per
 * client address, and once `max` is reached within `windowMs` that address gets 429 `RATE_LIMITED`
 * with `Retry-After` before any strategy runs. Requests without credentials and public endpoints are
 * not counted.
 */
export interface AuthFailureLimitOptions {
  /** Failed authentications allowed per address and window. */
  readonly max: number
  /** Length of a window in milliseconds. */
  readonly windowMs: number
  /**
   * Shares the counts between processes (a Redis store). Default: counted in this process only. Each
   * process also keeps its own count, so no store round trip is made for a request to be admitted.
   */
  readonly store?: RateLimitStoreService
  /** Proxies whose `X-Forwarded-For` entry is the address (as `rateLimit`'s). Default false: the request's address. */
  readonly trustProxy?: boolean | number
  /** Milliseconds an async store call may take before it counts as failed (default 250). */
  readonly storeTimeoutMs?: number
}

/** `metrics: { ... }`: where and to whom the Prometheus text is served, and the duration buckets. */
export interface MetricsOptions {
  /** Under `basePath`; default "/metrics". */
  readonly path?: string
  /** true: anyone may scrape. Default false: the global auth strategies run on the route. */
  readonly public?: boolean
  /** The caller needs one of these roles (needs a strategy; not with `public: true`). */
  readonly roles?: ReadonlyArray<string>
  /** Upper bounds in seconds of `queryserve_request_duration_seconds`'s buckets, increasing. */
  readonly buckets?: ReadonlyArray<number>
}

/** `mcp` of a ServeConfig: the Model Context Protocol endpoint that serves the endpoints as tools. */
export interface McpOptions {
  /** Under `basePath`. Default `/mcp`. */
  readonly path?: string
  /** The server name agents see. Default: the OpenAPI or docs title, else "queryserve". */
  readonly name?: string
  /** The server version agents see. Default: the OpenAPI document's version, else "1.0.0". */
  readonly version?: string
  /** Text telling agents how to use the tools (MCP's `instructions`). */
  readonly instructions?: string
}

export type QueryLoggingOption = boolean | "json" | ((event: ServeQueryEvent) => void)

/** `resultCache`: options of the server-side result cache. */
export interface ResultCacheOptions {
  /**
   * Where entries live. Default: an LRU in this process, bounded by `maxEntries` and `maxBytes`.
   * `redisResultCacheStore({ url })` shares them between processes and hosts.
   */
  readonly store?: Layer.Layer<ResultCacheStore, unknown>
  /** Most entries of the default memory store (default 10,000). */
  readonly maxEntries?: number
  /** Most bytes of the default memory store (default 64 MiB). */
  readonly maxBytes?: number
}

export interface ServeConfig<
  TQueries extends ServeQueriesMap = ServeQueriesMap,
  TAuth extends ServeAuthContext = ServeAuthContext,
  TContext = {}
> {
  readonly queries: TQueries
  readonly basePath?: string
  readonly middlewares?: ReadonlyArray<ServeMiddleware<unknown, TAuth, TContext>>
  readonly auth?: AuthStrategy<TAuth> | ReadonlyArray<AuthStrategy<TAuth>>
  readonly tenant?: TenantConfig<TAuth>
  readonly docs?: DocsOptions
  readonly openapi?: OpenApiOptions
  readonly context?: ServeContextFactory<TContext, TAuth>
  readonly hooks?: ServeLifecycleHooks
  readonly queryLogging?: QueryLoggingOption
  readonly slowQueryThreshold?: number
  readonly cors?: true | CorsOptions
  /**
   * Keep the results of every endpoint with `cacheTtlMs > 0` for that long, per endpoint, input and
   * caller scope, and answer repeated requests from them (`x-cache: HIT`). Off by default.
   */
  readonly resultCache?: boolean | ResultCacheOptions
  /** Throttle credential guessing per client address (off by default). */
  readonly authFailureLimit?: AuthFailureLimitOptions
  /** Services for handlers that return an Effect. */
  readonly layer?: Layer.Layer<never, unknown, never>
  /**
   * Run every stage in an Effect span (`queryserve.authenticate`, `.guards`, ...). Default: on when
   * `layer` installs a tracer (e.g. @effect/opentelemetry), off otherwise; off costs nothing.
   */
  readonly tracing?: boolean
  /** Prometheus metrics of every endpoint at `basePath + "/metrics"` (prom-client, loaded only when on). */
  readonly metrics?: boolean | MetricsOptions
  /**
   * Serves every endpoint as a tool for AI agents over the Model Context Protocol (Streamable HTTP,
   * stateless) at `basePath + /mcp`, behind the same auth, guards, tenant isolation and rate limits.
   */
  readonly mcp?: boolean | McpOptions
}
