import type * as Effect from "effect/Effect"
import type { QueryTypes, ServeAuthContext } from "../domain/config.js"

/** The value a handler result stands for: unwraps promises and Effects. */
export type ResultValue<R> = R extends Effect.Effect<infer A, infer _E, infer _R> ? A : Awaited<R>

/** What a caller sends to a query (typed by its input schema). */
export type QueryInput<Q> = Q extends { readonly "~types"?: QueryTypes<infer I, infer _O> } ? unknown extends I ? InputOfFunction<Q> : I
  : InputOfFunction<Q>

type InputOfFunction<Q> = Q extends (args: { readonly input: infer I }) => unknown ? I : unknown

/** What a caller gets back from a query (typed by its output schema, else by the handler's return type). */
export type QueryOutput<Q> = Q extends { readonly "~types"?: QueryTypes<infer _I, infer O> } ? unknown extends O ? OutputOfFunction<Q> : O
  : OutputOfFunction<Q>

type OutputOfFunction<Q> = Q extends { readonly query: (...args: ReadonlyArray<never>) => infer R } ? ResultValue<R>
  : Q extends (...args: ReadonlyArray<never>) => infer R ? ResultValue<R>
  : unknown

/** The values a context factory (object or function) contributes to `ctx`. */
export type ContextOf<F> = F extends undefined ? {} : F extends (args: never) => infer R ? Awaited<R> : F

/** The caller type produced by a set of strategies. */
export type AuthOf<S> = S extends ReadonlyArray<infer X> ? AuthOf<X>
  : S extends (args: never) => infer R ? Exclude<Awaited<R>, null | undefined>
  : ServeAuthContext
