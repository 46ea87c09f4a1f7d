import type {
  AuthStrategy,
  PageInput,
  PageWindow,
  PaginateOptions,
  ServeAuthContext,
  ServeContext,
  ServeMiddleware,
  ServeQueryConfig,
  TenantOverride,
  QueryResult,
  RunnableQuery
} from "../domain/config.js"
import type { HttpMethod } from "../domain/http.js"
import type { SchemaInput, SchemaOutput, ServeSchema } from "../domain/schema.js"
import type { PageOf, ResultValue, StreamedRows } from "./types.js"

/** Output types declared by `.output(schema)`: what the handler returns and what goes on the wire. */
interface DeclaredOutput<THandler, TWire> {
  readonly handler: THandler
  readonly wire: TWire
}

/** Marks the output of a paginated procedure: the wire has its rows as the `data` of a page. */
interface PagedOutput<TOut> {
  readonly paged: TOut
}

/** The declared output, kept inside the page marker when `.paginate()` came first. */
type Declared<TOut, D> = TOut extends PagedOutput<infer _T> ? PagedOutput<D> : D

type HandlerOutput<TOut> = TOut extends PagedOutput<infer T> ? HandlerOutput<T>
  : TOut extends DeclaredOutput<infer H, infer _W> ? H | StreamOf<H>
  : unknown
/** A declared array may also come as a stream of its elements: the runtime checks each row as it is served. */
type StreamOf<H> = H extends ReadonlyArray<infer Row> ? AsyncIterable<Row> | ReadableStream<Row> : never
type WireOutput<TOut, R> = TOut extends PagedOutput<infer T> ? PageOf<WireOutput<T, R>>
  : TOut extends DeclaredOutput<infer _H, infer W> ? W
  : StreamedRows<ResultValue<R>>

type Ctx<TInput, TAuth extends ServeAuthContext, TContext> = ServeContext<TInput, TAuth, TContext>

/**
 * Immutable builder of one query definition: every method returns a new builder, `.query()` ends it.
 * Type parameters carry the handler's input, what callers send, the declared output, the caller and ctx values.
 */
export interface ProcedureBuilder<
  TInput = unknown,
  TCallerInput = unknown,
  TOut = undefined,
  TAuth extends ServeAuthContext = ServeAuthContext,
  TContext = {}
> {
  input<S extends ServeSchema>(schema: S): ProcedureBuilder<SchemaOutput<S>, SchemaInput<S>, TOut, TAuth, TContext>
  output<S extends ServeSchema>(
    schema: S
  ): ProcedureBuilder<TInput, TCallerInput, Declared<TOut, DeclaredOutput<SchemaOutput<S>, SchemaInput<S>>>, TAuth, TContext>
  describe(text: string): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  name(text: string): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  summary(text: string): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  tag(tag: string): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  tags(tags: ReadonlyArray<string>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  method(verb: HttpMethod): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  cache(ttlMs: number | null): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  auth(strategy: AuthStrategy<TAuth> | null): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  requireAuth(): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  requireRole(...roles: ReadonlyArray<string>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  requireScope(...scopes: ReadonlyArray<string>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  public(): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  tenant(config: TenantOverride<TAuth> | false): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  /**
   * Tenant-scoped, but a caller without a tenant is let through unscoped (`ctx.tenantId` null) instead
   * of refused: `tenant({ ...config, required: false })`, over a tenant config given before.
   */
  tenantOptional(config?: TenantOverride<TAuth>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  custom(metadata: Readonly<Record<string, unknown>>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  /** `.mcp(false)` keeps the endpoint out of the MCP tools; it stays an HTTP endpoint. */
  mcp(enabled: boolean): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  use(...middlewares: ReadonlyArray<ServeMiddleware<TInput, TAuth, TContext>>): ProcedureBuilder<TInput, TCallerInput, TOut, TAuth, TContext>
  /**
   * Pages the answer: callers may send `limit` (default `defaultLimit` 100, at most `maxLimit` 1000)
   * and `cursor`; the handler gets `ctx.page = { limit, offset }` and gives up to `limit + 1` rows; the
   * answer is `{ data, page: { limit, nextCursor, hasMore } }`.
   */
  paginate(
    options?: PaginateOptions
  ): ProcedureBuilder<TInput, TCallerInput & PageInput, PagedOutput<TOut>, TAuth, TContext & { readonly page: PageWindow }>

  /** Ends the chain with the handler: `({ input, ctx }) => result`. */
  query<R extends QueryResult<HandlerOutput<TOut>>>(
    executable: (args: { readonly input: TInput; readonly ctx: Ctx<TInput, TAuth, TContext> }) => R
  ): ServeQueryConfig<TInput, ResultValue<R>, TCallerInput, WireOutput<TOut, R>, TAuth, TContext>
  /** Legacy positional form `(input, ctx) => result`. */
  query<R extends QueryResult<HandlerOutput<TOut>>>(
    executable: (input: TInput, ctx: Ctx<TInput, TAuth, TContext>) => R
  ): ServeQueryConfig<TInput, ResultValue<R>, TCallerInput, WireOutput<TOut, R>, TAuth, TContext>
  /** An object with `run`. */
  query<R extends QueryResult<HandlerOutput<TOut>>>(
    executable: RunnableQuery<TInput, ResultValue<R>, Ctx<TInput, TAuth, TContext>>
  ): ServeQueryConfig<TInput, ResultValue<R>, TCallerInput, WireOutput<TOut, R>, TAuth, TContext>
}

type MutableConfig = {
  -readonly [K in keyof ServeQueryConfig]?: ServeQueryConfig[K]
}

const appendUnique = (list: ReadonlyArray<string> | undefined, more: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...new Set([...(list ?? []), ...more])]

class Procedure {
  constructor(private readonly config: MutableConfig) {}

  private with(patch: MutableConfig): Procedure {
    return new Procedure({ ...this.config, ...patch })
  }

  input(schema: ServeSchema) { return this.with({ inputSchema: schema }) }
  output(schema: ServeSchema) { return this.with({ outputSchema: schema }) }
  describe(text: string) { return this.with({ description: text }) }
  name(text: string) { return this.with({ name: text }) }
  summary(text: string) { return this.with({ summary: text }) }
  tag(tag: string) { return this.with({ tags: appendUnique(this.config.tags, [tag]) }) }
  tags(tags: ReadonlyArray<string>) { return this.with({ tags: appendUnique(this.config.tags, tags) }) }
  method(verb: HttpMethod) { return this.with({ method: verb }) }
  cache(ttlMs: number | null) { return this.with({ cacheTtlMs: ttlMs }) }
  auth(strategy: AuthStrategy | null) { return this.with({ auth: strategy }) }
  requireAuth() { return this.with({ requiresAuth: true }) }
  requireRole(...roles: ReadonlyArray<string>) {
    return this.with({ requiresAuth: true, requiredRoles: appendUnique(this.config.requiredRoles, roles) })
  }
  requireScope(...scopes: ReadonlyArray<string>) {
    return this.with({ requiresAuth: true, requiredScopes: appendUnique(this.config.requiredScopes, scopes) })
  }
  public() { return this.with({ requiresAuth: false }) }
  tenant(config: TenantOverride | false) { return this.with({ tenant: config }) }
  tenantOptional(config?: TenantOverride) {
    const before = this.config.tenant === false ? undefined : this.config.tenant
    return this.with({ tenant: { ...before, ...config, required: false } })
  }
  custom(metadata: Readonly<Record<string, unknown>>) { return this.with({ custom: { ...this.config.custom, ...metadata } }) }
  mcp(enabled: boolean) { return this.with({ mcp: enabled }) }
  use(...middlewares: ReadonlyArray<ServeMiddleware>) {
    return this.with({ middlewares: [...(this.config.middlewares ?? []), ...middlewares] })
  }
  paginate(options: PaginateOptions = {}) { return this.with({ paginate: options }) }
  query(executable: ServeQueryConfig["query"]): ServeQueryConfig {
    return { ...this.config, query: executable }
  }
}

/** A fresh procedure builder. */
export const procedure = <TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}>(): ProcedureBuilder<
  unknown,
  unknown,
  undefined,
  TAuth,
  TContext
> => new Procedure({}) as unknown as ProcedureBuilder<unknown, unknown, undefined, TAuth, TContext>
