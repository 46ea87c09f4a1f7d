import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import type { ServeContext } from "../domain/config.js"
import { toServeError } from "../domain/errors.js"
import type { MaybePromise } from "../domain/maybePromise.js"

export type Invoker = (input: unknown, ctx: ServeContext) => unknown

type AnyFunction = (...args: ReadonlyArray<never>) => unknown
type Callable = (first: unknown, second?: unknown) => unknown

/**
 * Normalises the executable shapes once: `({ input, ctx })`, legacy `(input, ctx)` (recognised by
 * declaring two parameters), and objects with `run` of either form.
 */
export const toInvoker = (executable: unknown): Invoker => {
  const target = typeof executable === "function"
    ? { fn: executable as AnyFunction, self: undefined }
    : typeof executable === "object" && executable !== null && typeof (executable as { run?: unknown }).run === "function"
    ? { fn: (executable as { run: AnyFunction }).run, self: executable }
    : undefined
  if (target === undefined) throw new TypeError("query must be a function or an object with a run method")
  const fn = target.fn as unknown as Callable
  const self = target.self
  return fn.length >= 2
    ? (input, ctx) => fn.call(self, input, ctx)
    : (input, ctx) => fn.call(self, { input, ctx })
}

/** Runs an Effect returned by a handler on the serve runtime; the request signal interrupts it. */
export const makeEffectRunner = (runtime: Runtime.Runtime<never>) => {
  const runExit = Runtime.runPromiseExit(runtime)
  return (effect: Effect.Effect<unknown, unknown, never>, signal: AbortSignal): Promise<unknown> =>
    runExit(effect, { signal }).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      // Expected failures keep their tag (ServeHttpError, QueryFailure...); defects and interruptions are internal.
      throw failure._tag === "Some" ? toServeError(failure.value) : toServeError(Cause.squash(exit.cause))
    })
}

export type EffectRunner = ReturnType<typeof makeEffectRunner>

const EFFECT_TYPE_ID = Symbol.for("effect/Effect")

/** `Effect.isEffect`, inlined: it runs on every request, and Effect's goes through a dual-arity wrapper. */
const isEffect = (value: unknown): value is Effect.Effect<unknown, unknown, never> =>
  ((typeof value === "object" && value !== null) || typeof value === "function") && EFFECT_TYPE_ID in value

/** A handler's value, promise or Effect, as a plain value or promise. */
export const settle = (result: unknown, ctx: ServeContext, runEffect: EffectRunner): MaybePromise<unknown> =>
  isEffect(result) ? runEffect(result, ctx.signal) : result
