import type { ServeAuthContext, ServeConfig, ServeQueriesMap } from "../domain/config.js"
import { defineServe, type ServeBuilder } from "./defineServe.js"
import { procedure, type ProcedureBuilder } from "./procedure.js"
import type { AuthOf, ContextOf } from "./types.js"

/** Everything of a ServeConfig except the queries: shared by every `define` of this `initServe`. */
export type InitServeOptions = Omit<ServeConfig<ServeQueriesMap, ServeAuthContext, unknown>, "queries" | "context" | "auth"> & {
  readonly context?: unknown
  readonly auth?: unknown
}

export interface ServeInit<TAuth extends ServeAuthContext, TContext> {
  /** A fresh immutable procedure builder whose `ctx` knows the context and caller types. */
  readonly query: ProcedureBuilder<unknown, unknown, undefined, TAuth, TContext>
  /** Identity helper that keeps each query's own types in the map. */
  queries<const TQueries extends ServeQueriesMap>(queries: TQueries): TQueries
  /** `defineServe` with these options; the config given here overrides them. */
  define<const TQueries extends ServeQueriesMap>(
    config: { readonly queries: TQueries } & Partial<Omit<ServeConfig<TQueries, TAuth, TContext>, "queries">>
  ): ServeBuilder<TQueries>
}

/**
 * Shares options and types across query definitions:
 * `const { query, queries, define } = initServe({ context: () => ({ db }), auth: apiKeyAuth(...) })`.
 */
export const initServe = <const TOptions extends InitServeOptions>(
  options: TOptions
): ServeInit<AuthOf<TOptions["auth"]> & ServeAuthContext, ContextOf<TOptions["context"]>> => {
  type TAuth = AuthOf<TOptions["auth"]> & ServeAuthContext
  type TContext = ContextOf<TOptions["context"]>
  return {
    query: procedure<TAuth, TContext>(),
    queries: (queries) => queries,
    define: (config) =>
      defineServe({ ...(options as unknown as Partial<ServeConfig<ServeQueriesMap, TAuth, TContext>>), ...config } as ServeConfig<
        typeof config.queries,
        TAuth,
        TContext
      >)
  }
}
