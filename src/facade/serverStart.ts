import type { NodeServerOptions, RunningServer } from "../server/serverOptions.js"
import type { ServeHandler } from "../domain/http.js"
import type { ContractPaths } from "../docs/routes.js"

/**
 * What `builder.start()` runs: the entry of queryserve that was imported decides. `announce`, the
 * API's contract paths, is what its start line names.
 */
type StartServer = (handler: ServeHandler, options: NodeServerOptions | undefined, announce: ContractPaths) => Promise<RunningServer>

const notInThisBuild: StartServer = () => {
  throw new Error(
    "start() needs Node's HTTP server, which queryserve's web build (the one for workerd, Deno and browsers) leaves out. " +
      "Serve the API with createFetchHandler(api.handler), e.g. `export default { fetch: createFetchHandler(api.handler) }`, " +
      "or import \"queryserve/node\" where node:http exists."
  )
}

let startServer: StartServer = notInThisBuild

/**
 * Called once by the Node entry with its node:http server. The web entry never calls it, so nothing
 * it bundles reaches a `node:` module through `start()`.
 */
export const provideServerStart = (start: StartServer): void => {
  startServer = start
}

/** `builder.start()`: the Node server, or an error naming createFetchHandler in the web build. */
export const startServerFor: StartServer = (handler, options, announce) => startServer(handler, options, announce)
