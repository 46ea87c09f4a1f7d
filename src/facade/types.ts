import type * as Effect from "effect/Effect"
import type { QueryTypes } from "../domain/config.js"

/** The value a handler result stands for: unwraps promises and Effects. */
export type ResultValue<R> = R extends Effect.Effect<infer A, infer _E, infer _R> ? A : Awaited<R>

/** What a caller sends to a query (typed by its input schema). */
export type QueryInput<Q> = Q extends { readonly "~types"?: QueryTypes<infer I, infer _O> } ? unknown extends I ? InputOfFunction<Q> : I
  : InputOfFunction<Q>

/** A query needs no input when its input accepts `{}` (no required field) or `undefined` (`Schema.Undefined`, `z.undefined()`). */
export type TakesNothing<I> = {} extends I ? true : undefined extends I ? true : false

type InputOfFunction<Q> = Q extends (args: { readonly input: infer I }) => unknown ? I : unknown

/** What a caller gets back from a query (typed by its output schema, else by the handler's return type). */
export type QueryOutput<Q> = Q extends { readonly "~types"?: QueryTypes<infer _I, infer O> } ? unknown extends O ? OutputOfFunction<Q> : O
  : OutputOfFunction<Q>

type OutputOfFunction<Q> = Q extends { readonly query: (...args: ReadonlyArray<never>) => infer R } ? ResultValue<R>
  : Q extends (...args: ReadonlyArray<never>) => infer R ? ResultValue<R>
  : unknown
