import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Runtime from "effect/Runtime"
import type { ServeContext } from "../domain/config.js"
import { shuttingDown, toServeError } from "../domain/errors.js"
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

/**
 * The fibers a pipeline runs Effects in (handlers', and the stages' when traced), in a set its layer's
 * scope owns: releasing the layer interrupts them and waits for their finalizers before the services
 * they use are released.
 */
export interface EffectFibers {
  readonly set: FiberSet.FiberSet<unknown, unknown>
  /** Set first when the layer is released: from then on requests are refused and interrupted ones answered with `shuttingDown`. */
  closing: boolean
}

/** Runs an Effect on `runtime` as one of `fibers`; the request signal interrupts it. */
export const makeEffectRunner = (runtime: Runtime.Runtime<never>, fibers: EffectFibers) => {
  const fork = Runtime.runFork(runtime)
  return (effect: Effect.Effect<unknown, unknown, never>, signal: AbortSignal): Promise<unknown> =>
    new Promise((resolve, reject) => {
      // Forked now, a fiber would run on services already released (the set would interrupt it only after it started).
      if (fibers.closing) return reject(shuttingDown)
      const fiber = fork(effect)
      FiberSet.unsafeAdd(fibers.set, fiber)
      if (signal.aborted) fiber.unsafeInterruptAsFork(fiber.id())
      else {
        const onAbort = () => fiber.unsafeInterruptAsFork(fiber.id())
        signal.addEventListener("abort", onAbort, { once: true })
        fiber.addObserver(() => signal.removeEventListener("abort", onAbort))
      }
      fiber.addObserver((exit) => {
        if (Exit.isSuccess(exit)) return resolve(exit.value)
        const failure = Cause.failureOption(exit.cause)
        // Expected failures keep their tag (ServeHttpError, QueryFailure...); an interruption by the
        // release is the shutdown's 503; other defects and interruptions are internal.
        if (failure._tag === "Some") reject(toServeError(failure.value))
        else if (fibers.closing && Cause.isInterruptedOnly(exit.cause)) reject(shuttingDown)
        else reject(toServeError(Cause.squash(exit.cause)))
      })
    })
}

export type EffectRunner = ReturnType<typeof makeEffectRunner>

const EFFECT_TYPE_ID = Symbol.for("effect/Effect")

/** `Effect.isEffect`, inlined: it runs on every request, and Effect's goes through a dual-arity wrapper. */
export const isEffect = (value: unknown): value is Effect.Effect<unknown, unknown, never> =>
  ((typeof value === "object" && value !== null) || typeof value === "function") && EFFECT_TYPE_ID in value

/** A handler's value, promise or Effect, as a plain value or promise. */
export const settle = (result: unknown, ctx: ServeContext, runEffect: EffectRunner): MaybePromise<unknown> =>
  isEffect(result) ? runEffect(result, ctx.signal) : result
