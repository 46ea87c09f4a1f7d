import * as Effect from "effect/Effect"
import type {
  QueryResolver,
  ServeAuthContext,
  ServeContext,
  ServeContextFactory,
  ServeQueryConfig
} from "../domain/config.js"
import { InternalError, ValidationError } from "../domain/errors.js"
import type { ServeRequest } from "../domain/http.js"
import { compileSchema, type SchemaInput, type SchemaOutput, type ServeSchema } from "../domain/schema.js"
import { resolveRequestId } from "../stages/requestId.js"
import { isEffect, toInvoker } from "../stages/invoke.js"
import { toThrowable } from "../pipeline/Pipeline.js"
import type { ResultValue } from "./types.js"

type HandlerInput<IS> = IS extends ServeSchema ? SchemaOutput<IS> : unknown
type CallerInput<IS> = IS extends ServeSchema ? SchemaInput<IS> : unknown
type WireOutput<OS, R> = OS extends ServeSchema ? SchemaInput<OS> : ResultValue<R>

/**
 * A query written as one object, as @hypequery/serve's `query({ input, output, query })`: `input`
 * and `output` are the schemas, every other field is the ServeQueryConfig field of that name.
 */
export type QueryObjectConfig<IS, OS, R, TAuth extends ServeAuthContext, TContext> =
  & Omit<ServeQueryConfig<HandlerInput<IS>, ResultValue<R>, CallerInput<IS>, WireOutput<OS, R>, TAuth, TContext>, "query" | "inputSchema" | "outputSchema" | "~types">
  & {
    readonly input?: IS
    readonly output?: OS
    readonly query: (args: { readonly input: HandlerInput<IS>; readonly ctx: ServeContext<HandlerInput<IS>, TAuth, TContext> }) => R
  }

/** What `.execute()` of an object-style query takes: all optional. */
export interface DirectExecuteOptions<TInput = unknown> {
  readonly input?: TInput
  /** Merged into `ctx`, over what the context factory gives. */
  readonly context?: Readonly<Record<string, unknown>>
  /** The request fields the handler should see (default: POST /__query/execute, no headers). */
  readonly request?: Partial<ServeRequest>
}

/** An object-style query: a query definition for any API's `queries`, which also runs on its own. */
export type StandaloneQuery<TInput, TOutput, TCallerInput, TWireOutput, TAuth extends ServeAuthContext, TContext> =
  & ServeQueryConfig<TInput, TOutput, TCallerInput, TWireOutput, TAuth, TContext>
  & {
    /** The handler as given. */
    readonly run: QueryResolver<TInput, TOutput, ServeContext<TInput, TAuth, TContext>>
    /**
     * Runs the handler in this process, as @hypequery/serve does: the input is validated and the
     * answer shaped by the schemas (a mismatch rejects with a ServeHttpError, 400 or 500), the context
     * factory runs, and there is no caller (`ctx.auth` null): strategies, guards, tenancy and
     * middlewares belong to an API and are not run. To run it as an API would, `api.execute(key, …)`.
     */
    execute(options?: DirectExecuteOptions<TCallerInput>): Promise<TWireOutput>
  }

export type QueryFactory<TAuth extends ServeAuthContext, TContext> = <IS extends ServeSchema | undefined = undefined, OS extends ServeSchema | undefined = undefined, R = unknown>(
  config: QueryObjectConfig<IS, OS, R, TAuth, TContext>
) => StandaloneQuery<HandlerInput<IS>, ResultValue<R>, CallerInput<IS>, WireOutput<OS, R>, TAuth, TContext>

/** What the schemas throw: a ValidationError for the input, an InternalError for the answer. */
const isSchemaFailure = (error: unknown): error is ValidationError | InternalError =>
  error instanceof ValidationError || error instanceof InternalError

/** A schema failure as what `api.execute` rejects with (a ServeHttpError); anything else as thrown. */
const asThrowable = (error: unknown): unknown => (isSchemaFailure(error) ? toThrowable(error) : error)

const resolveContext = async (factory: ServeContextFactory<unknown> | undefined, request: ServeRequest): Promise<object> => {
  const context = typeof factory === "function" ? await factory({ request, auth: null }) : factory
  return typeof context === "object" && context !== null ? context : {}
}

/** Makes object-style queries whose `.execute()` gets its `ctx` values from `context` (initServe's). */
export const queryFactory = <TAuth extends ServeAuthContext, TContext>(
  context?: ServeContextFactory<TContext, TAuth>
): QueryFactory<TAuth, TContext> =>
  ((config: QueryObjectConfig<ServeSchema | undefined, ServeSchema | undefined, unknown, ServeAuthContext, {}>) => {
    const { input, output, ...fields } = config
    const decoder = compileSchema(input, "input")
    const encoder = compileSchema(output, "output")
    const invoke = toInvoker(config.query)
    const execute = async (options: DirectExecuteOptions = {}): Promise<unknown> => {
      const request: ServeRequest = {
        method: config.method ?? "POST",
        path: "/__query/execute",
        query: {},
        headers: {},
        body: options.input,
        ...options.request
      }
      try {
        const decoded = await decoder.decode(options.input)
        const ctx = {
          input: decoded,
          auth: null,
          tenantId: null,
          request,
          requestId: resolveRequestId(request),
          endpoint: {
            key: config.name ?? "query",
            name: config.name ?? "query",
            path: request.path,
            method: request.method,
            requiresAuth: false,
            requiredRoles: config.requiredRoles ?? [],
            requiredScopes: config.requiredScopes ?? [],
            summary: config.summary,
            description: config.description,
            tags: config.tags ?? [],
            cacheTtlMs: config.cacheTtlMs ?? null,
            custom: config.custom
          },
          locals: {},
          signal: new AbortController().signal,
          setCacheTtl: () => {},
          setHeader: () => {},
          page: undefined,
          ...(await resolveContext(context as ServeContextFactory<unknown> | undefined, request)),
          ...options.context
        } as ServeContext
        const result: unknown = await invoke(decoded, ctx)
        return await encoder.encode(isEffect(result) ? await Effect.runPromise(result) : result)
      } catch (error) {
        throw asThrowable(error)
      }
    }
    return {
      ...fields,
      ...(input === undefined ? {} : { inputSchema: input }),
      ...(output === undefined ? {} : { outputSchema: output }),
      run: config.query,
      execute
    }
  }) as unknown as QueryFactory<TAuth, TContext>

/** An object-style query with no shared context: `query({ input, output, query })`, as @hypequery/serve's. */
export const query: QueryFactory<ServeAuthContext, {}> = queryFactory()
