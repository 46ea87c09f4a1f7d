import type { Effect, Layer } from "effect"
import type { ResultCacheStore } from "../cache/ResultCacheStore.js"
import type { HttpMethod, ServeRequest } from "./http.js"
import type { MaybePromise } from "./maybePromise.js"
import type { ServeSchema } from "./schema.js"
import type { ServeQueryEvent } from "./event.js"

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
  /** Tenant id of the caller; null/undefined means none. */
  extract(auth: TAuth | null): string | null | undefined
  /** Column that auto-inject filters on. Default "tenant_id". */
  readonly column?: string
  /** "manual" (default): `ctx.tenantId` is set and the handler filters. "auto-inject": query builders are filtered for it. */
  readonly mode?: TenantMode
  /** Default true: a request without a tenant id is refused with 403. */
  readonly required?: boolean
}

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
  /** Overrides the global tenant config; `false` opts out. */
  readonly tenant?: TenantConfig<TAuth> | false
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
    readonly status: number
    readonly result: unknown
  }) => void
  readonly onError?: (event: {
    readonly error: unknown
    readonly queryKey: string
    readonly requestId: string
    readonly durationMs: number
  }) => void
  readonly onAuthFailure?: (event: {
    readonly requestId: string
    readonly queryKey: string
    readonly reason: string
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
  readonly origin?: string | ReadonlyArray<string> | ((origin: string) => boolean)
  readonly methods?: ReadonlyArray<string>
  readonly allowedHeaders?: ReadonlyArray<string>
  readonly exposedHeaders?: ReadonlyArray<string>
  readonly credentials?: boolean
  readonly maxAge?: number
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
