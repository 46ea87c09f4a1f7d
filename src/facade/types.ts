import type * as Effect from "effect/Effect"
import type { PaginateOptions, QueryTypes } from "../domain/config.js"
import type { Page } from "../pagination/page.js"

/** The value a handler result stands for: unwraps promises and Effects. */
export type ResultValue<R> = R extends Effect.Effect<infer A, infer _E, infer _R> ? A : Awaited<R>

/** What a caller sends to a query (typed by its input schema). */
export type QueryInput<Q> = Q extends { readonly "~types"?: QueryTypes<infer I, infer _O> } ? unknown extends I ? InputOfFunction<Q> : I
  : InputOfFunction<Q>

/** A query needs no input when its input accepts `{}` (no required field) or `undefined` (`Schema.Undefined`, `z.undefined()`). */
export type TakesNothing<I> = {} extends I ? true : undefined extends I ? true : false

type InputOfFunction<Q> = Q extends (args: { readonly input: infer I }) => unknown ? I : unknown

/**
 * What a caller gets back from a query (typed by its output schema, else by the handler's return type);
 * a paginated one answers a page of its rows.
 */
export type QueryOutput<Q> = Q extends { readonly "~types"?: QueryTypes<infer _I, infer O> } ? unknown extends O ? ConfigOutput<Q> : O
  : ConfigOutput<Q>

/** A streamed answer reaches the wire (and a page's `data`) as the array of its rows. */
export type StreamedRows<V> = V extends AsyncIterable<infer Row> ? Array<Row> : V extends ReadableStream<infer Row> ? Array<Row> : V

/** A paginated answer: the rows of the page as its `data`. */
export interface PageOf<Rows> {
  readonly data: Rows
  readonly page: Page
}

/** The object form `paginate: {…}` wraps the handler's rows in a page (the builder's `.paginate()` says so in `~types`). */
type ConfigOutput<Q> = Q extends { readonly paginate: PaginateOptions } ? PageOf<StreamedRows<OutputOfFunction<Q>>> : OutputOfFunction<Q>

type OutputOfFunction<Q> = Q extends { readonly query: (...args: ReadonlyArray<never>) => infer R } ? ResultValue<R>
  : Q extends (...args: ReadonlyArray<never>) => infer R ? ResultValue<R>
  : unknown
