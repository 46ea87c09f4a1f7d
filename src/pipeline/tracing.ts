import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { EndpointCache } from "../cache/resultCache.js"
import { isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import { TransportRequest } from "../domain/transportRequest.js"
import type { PresetInputs, RequestContext } from "../stages/context.js"
import { type EffectFibers, makeEffectRunner } from "../stages/invoke.js"
import { composeMiddlewares } from "../stages/middleware.js"
import type { EndpointPlan } from "../stages/plan.js"
import { STAGES, type StageSteps } from "./spine.js"

/** `config.tracing`: true or false forces stage spans on or off; undefined follows the tracer (see `tracingEnabled`). */
export class StageTracing extends Context.Reference<StageTracing>()("queryserve/StageTracing", {
  defaultValue: (): boolean | undefined => undefined
}) {}

const builtInTracer = Effect.runSync(Effect.tracer)

/** On when asked for, or (unless turned off) when the layer installed a tracer of its own, e.g. @effect/opentelemetry's. */
export const tracingEnabled: Effect.Effect<boolean> = Effect.zipWith(
  StageTracing,
  Effect.tracer,
  (configured, tracer) => configured ?? tracer !== builtInTracer
)

/** A step's plain value, promise or throw as an Effect (failures keep the thrown value). */
const fromStep = <A>(step: () => MaybePromise<A>): Effect.Effect<A, unknown> =>
  Effect.suspend(() => {
    let result: MaybePromise<A>
    try {
      result = step()
    } catch (error) {
      return Effect.fail(error)
    }
    return isPromiseLike(result) ? Effect.tryPromise({ try: () => Promise.resolve(result), catch: (error) => error }) : Effect.succeed(result)
  })

/** The handler's result in the running fiber: an Effect handler's own spans nest under `queryserve.handler`. */
const invokeHandler = (plan: EndpointPlan, ctx: RequestContext): Effect.Effect<unknown, unknown> =>
  Effect.suspend(() => {
    const result = plan.invoke(ctx.input, ctx.asServeContext())
    return Effect.isEffect(result) ? (result as Effect.Effect<unknown, unknown>) : fromStep(() => result)
  })

/**
 * The same stages as `EndpointStages`, each in an Effect span named for it (`queryserve.authenticate`,
 * `.guards`, `.tenant`, `.validate`, `.context`, `.middleware` when there are middlewares, `.cache`
 * on cached endpoints, `.handler`, `.output`) under one `queryserve.request` span, with the request
 * id and query key as attributes. Only used when tracing is on: it costs an Effect run per request.
 * What runs outside the fiber (the handler below a middleware or the cache) joins `fibers` too, so
 * that releasing the pipeline interrupts it.
 */
export const tracedStages = (
  steps: StageSteps,
  plan: EndpointPlan,
  ctx: RequestContext,
  preset: PresetInputs | undefined,
  cache: EndpointCache | undefined,
  fibers: EffectFibers
): Effect.Effect<unknown, unknown> => {
  const attributes = { requestId: ctx.requestId, queryKey: plan.info.key }
  const span = <A>(name: string, effect: Effect.Effect<A, unknown>) => Effect.withSpan(effect, `queryserve.${name}`, { attributes })
  const handler = span("handler", invokeHandler(plan, ctx))
  const encode = (result: unknown) => span("output", fromStep(() => plan.output.encode(result)))
  // The cache stores encoded results: on a cached endpoint, encoding happens inside it, on a miss.
  const answer = cache === undefined ? handler : span(
    "cache",
    Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      const runEffect = makeEffectRunner(runtime, fibers)
      return fromStep(() => cache.lookup(ctx, () => runEffect(Effect.flatMap(handler, encode), ctx.signal), false))
    })
  )
  // Middlewares call `next` outside the fiber: the handler then runs on the runtime captured inside the middleware span.
  const chain = plan.middlewares.length === 0 ? answer : span(
    "middleware",
    Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      const runEffect = makeEffectRunner(runtime, fibers)
      return fromStep(() => composeMiddlewares(plan.middlewares, () => runEffect(answer, ctx.signal))(ctx.asServeContext()))
    })
  )
  const stages = Effect.forEach(STAGES, ({ name, step }) => span(name, fromStep(() => steps[step](plan, ctx, preset))), { discard: true })
  return stages.pipe(
    Effect.zipRight(chain),
    // A middleware's own answer on a cached endpoint never reached the cache stage, which encodes (see EndpointStages).
    Effect.flatMap((result) => (cache === undefined || ctx.cacheStatus === undefined ? encode(result) : Effect.succeed(result))),
    Effect.withSpan("queryserve.request", {
      attributes: { ...attributes, "http.method": ctx.request.method, "url.path": ctx.request.path },
      parent: ctx.request instanceof TransportRequest ? ctx.request.traceParent : undefined
    })
  )
}
