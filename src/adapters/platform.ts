import type { HttpMethod, ServeHandler } from "../domain/http.js"
import { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from "./fetch.js"

/**
 * The edge handler for a Vercel-style platform: a fetch handler that is also available under each
 * method name, so a route file can `export const { GET, POST, OPTIONS } = createPlatformEdgeHandler(api.handler)`
 * or `export default` it.
 */
export type PlatformEdgeHandler = FetchHandler & { readonly [M in HttpMethod]: FetchHandler }

const withMethodExports = (handler: FetchHandler): PlatformEdgeHandler =>
  Object.assign(handler, { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, HEAD: handler, OPTIONS: handler })

/**
 * For the platform's edge runtime. There is no socket there: the platform's own proxy sets
 * `x-forwarded-for`, so `trustProxy` defaults to true.
 */
export const createPlatformEdgeHandler = (handler: ServeHandler, options: FetchHandlerOptions = {}): PlatformEdgeHandler =>
  withMethodExports(createFetchHandler(handler, { trustProxy: true, ...options }))
