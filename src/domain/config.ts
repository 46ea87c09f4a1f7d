import type * as Effect from "effect/Effect"
import type { HttpMethod, ServeRequest } from "./http.js"
import type { MaybePromise } from "./maybePromise.js"
import type { ServeSchema } from "./schema.js"

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
  /** On paginated endpoints: the rows to give, `LIMIT limit + 1 OFFSET offset` (the extra row says there is more). Undefined elsewhere. */
  readonly page: PageWindow | undefined
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

/** The window of rows a paginated handler gives: `limit + 1` rows from `offset` (the extra one only says there is more). */
export interface PageWindow {
  readonly limit: number
  readonly offset: number
}

/** `paginate` of a query: how many rows a page holds when the caller does not say, and at most. */
export interface PaginateOptions {
  /** Default 100. */
  readonly defaultLimit?: number
  /** Default 1000; a larger `limit` is refused (400), never clamped. */
  readonly maxLimit?: number
}

/** What callers of a paginated endpoint may send besides its own input. */
export interface PageInput {
  readonly limit?: number
  /** `page.nextCursor` of the previous answer. */
  readonly cursor?: string
}

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
  /** The route's path under `basePath`. Default: the key. */
  readonly path?: string
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
  /**
   * Pages the answer: optional `limit` and `cursor` inputs, `ctx.page` for the handler, and
   * `{ data, page: { limit, nextCursor, hasMore } }` as the answer.
   */
  readonly paginate?: PaginateOptions
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
