import type { ServeHandler } from "../domain/http.js"
import { createNodeHandler, type NodeHandlerOptions, type NodeListener } from "./node.js"

/**
 * For the platform's Node runtime (`export default createPlatformNodeHandler(api.handler)`). A body the
 * runtime already parsed into `req.body` is used as is; `trustProxy` defaults to true as on the edge.
 */
export const createPlatformNodeHandler = (handler: ServeHandler, options: NodeHandlerOptions = {}): NodeListener =>
  createNodeHandler(handler, { trustProxy: true, ...options })
