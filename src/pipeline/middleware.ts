import type { ServeContext, ServeMiddleware } from "../domain/config.js"
import type { MaybePromise } from "../domain/maybePromise.js"

export type ContextHandler = (ctx: ServeContext) => MaybePromise<unknown>

/** Onion composition, done once per endpoint: global middlewares first, then the endpoint's, then the handler. */
export const composeMiddlewares = (middlewares: ReadonlyArray<ServeMiddleware>, handler: ContextHandler): ContextHandler =>
  middlewares.reduceRight<ContextHandler>((next, middleware) => (ctx) => middleware(ctx, () => next(ctx)), handler)
