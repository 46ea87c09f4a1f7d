import type { ServeAuthContext, ServeQueriesMap } from "../domain/config.js"
import type { ServeConfig } from "../config/ServeConfig.js"
import { defineServe, type ServeBuilder } from "./defineServe.js"
import { procedure, type ProcedureBuilder } from "./procedure.js"
import { type QueryFactory, queryFactory } from "./standaloneQuery.js"

/** Everything of a ServeConfig except the queries: shared by every `define` of this `initServe`. */
export type InitServeOptions<TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}> = Omit<
  ServeConfig<ServeQueriesMap, TAuth, TContext>,
  "queries"
>

export interface ServeInit<TAuth extends ServeAuthContext, TContext> {
  /**
   * A fresh immutable procedure builder whose `ctx` knows the context and caller types; called with
   * an object (`query({ input, output, query })`), an object-style query whose `.execute()` runs it
   * with this `context`.
   */
  readonly query: ProcedureBuilder<unknown, unknown, undefined, TAuth, TContext> & QueryFactory<TAuth, TContext>
  /** `query` under @hypequery/serve's other name for it: the same object. */
  readonly procedure: ProcedureBuilder<unknown, unknown, undefined, TAuth, TContext> & QueryFactory<TAuth, TContext>
  /** Identity helper that keeps each query's own types in the map. */
  queries<const TQueries extends ServeQueriesMap>(queries: TQueries): TQueries
  /** `defineServe` with these options; the config given here overrides them. */
  define<const TQueries extends ServeQueriesMap>(
    config: { readonly queries: TQueries } & Partial<Omit<ServeConfig<TQueries, TAuth, TContext>, "queries">>
  ): ServeBuilder<TQueries>
}

/**
 * The builder that is also a function: its methods are the builder's, a call makes an object-style
 * query. (A Proxy, since a function's own `name` would hide the builder's `name()`.)
 */
const callableBuilder = <B extends object, F extends (...args: never) => unknown>(builder: B, factory: F): B & F =>
  new Proxy(factory, {
    get: (target, property, receiver) => {
      if (!(property in builder)) return Reflect.get(target, property, receiver)
      const member: unknown = Reflect.get(builder, property)
      return typeof member === "function" ? member.bind(builder) : member
    }
  }) as B & F

/**
 * Shares options and types across query definitions:
 * `const { query, queries, define } = initServe({ context: () => ({ db }), auth: apiKeyAuth(...) })`.
 * The caller and context types are inferred as `defineServe` infers them; the caller is also a
 * ServeAuthContext (its `roles`, `scopes` and `tenantId` are known even when the strategy's type lacks them).
 */
export const initServe = <TAuth extends ServeAuthContext = ServeAuthContext, TContext = {}>(
  options: InitServeOptions<TAuth & ServeAuthContext, TContext>
): ServeInit<TAuth & ServeAuthContext, TContext> => {
  const query = callableBuilder(procedure<TAuth & ServeAuthContext, TContext>(), queryFactory(options.context))
  return {
    query,
    procedure: query,
    queries: (queries) => queries,
    define: (config) => defineServe<typeof config.queries, TAuth & ServeAuthContext, TContext>({ ...options, ...config })
  }
}
