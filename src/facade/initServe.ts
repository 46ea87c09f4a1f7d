import type { ServeAuthContext, ServeQueriesMap } from "../domain/config.js"
import type { ServeConfig } from "../config/ServeConfig.js"
import { defineServe, type ServeBuilder } from "./defineServe.js"
import { procedure, type ProcedureBuilder } from "./procedure.js"

/** Everything of a ServeConfig except the queries: shared by every `define` of this `initServe`. */
export type InitServeOptions<TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}> = Omit<
  ServeConfig<ServeQueriesMap, TAuth, TContext>,
  "queries"
>

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
 * The caller and context types are inferred as `defineServe` infers them; the caller is also a
 * ServeAuthContext (its `roles`, `scopes` and `tenantId` are known even when the strategy's type lacks them).
 */
export const initServe = <TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}>(
  options: InitServeOptions<TAuth & ServeAuthContext, TContext>
): ServeInit<TAuth & ServeAuthContext, TContext> => ({
  query: procedure<TAuth, TContext>(),
  queries: (queries) => queries,
  define: (config) => defineServe<typeof config.queries, TAuth & ServeAuthContext, TContext>({ ...options, ...config })
})
