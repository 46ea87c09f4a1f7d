import type { ServeContext, ServeMiddleware } from "../domain/config.js"
import type { MaybePromise } from "../domain/maybePromise.js"

export type ContextHandler = (ctx: ServeContext) => MaybePromise<unknown>

/** `next` for one middleware call: a second call would run the rest of the chain (the query) again. */
const nextOnce = (next: ContextHandler, ctx: ServeContext): (() => MaybePromise<unknown>) => {
  let called = false
  return () => {
    if (called) throw new Error("A middleware called next() more than once; the rest of the chain runs once per request")
    called = true
    return next(ctx)
  }
}

/** Onion composition, done once per endpoint: global middlewares first, then the endpoint's, then the handler. */
export const composeMiddlewares = (middlewares: ReadonlyArray<ServeMiddleware>, handler: ContextHandler): ContextHandler =>
  middlewares.reduceRight<ContextHandler>((next, middleware) => (ctx) => middleware(ctx, nextOnce(next, ctx)), handler)
