/**
 * The hot path stays synchronous until a stage really returns a promise:
 * `andThen` continues inline on plain values and only chains on thenables.
 */
export type MaybePromise<A> = A | PromiseLike<A>

export const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

export const andThen = <A, B>(value: MaybePromise<A>, f: (a: A) => MaybePromise<B>): MaybePromise<B> =>
  isPromiseLike(value) ? (value as PromiseLike<A>).then(f) : f(value as A)
