import { formatQueryEvent } from "../domain/event.js"
import type { ServeHandler } from "../domain/http.js"
import { resultBlind, type ServeQueryLogger } from "../stages/events.js"
import { startNodeServer } from "./nodeServer.js"
import type { NodeServerOptions, RunningServer } from "./serverOptions.js"
import type { ContractPaths } from "../docs/routes.js"

export interface ServeDevOptions extends NodeServerOptions {
  /** Default 4000. */
  readonly port?: number
  /** Default "localhost". */
  readonly hostname?: string
  /** Stops the server when it aborts. */
  readonly signal?: AbortSignal
  /** Skip the start banner; the request lines are printed all the same. */
  readonly quiet?: boolean
}

/** What `serveDev` needs of a `defineServe` builder. */
export interface DevServable {
  readonly handler: ServeHandler
  readonly queryLogger: ServeQueryLogger
  readonly contractPaths: ContractPaths
  describe(): ReadonlyArray<{ readonly method: string; readonly path: string }>
  readonly runtime: { runtime(): Promise<unknown> }
}

const banner = (api: DevServable, url: string): string => {
  const routes = api.describe().map((route) => `  ${route.method.padEnd(7)} ${url}${route.path}`)
  const { docs, openapi } = api.contractPaths
  return [
    `queryserve dev server on ${url}`,
    ...routes,
    ...(docs === undefined ? [] : [`  docs    ${url}${docs}`]),
    ...(openapi === undefined ? [] : [`  openapi ${url}${openapi}`])
  ].join("\n")
}

/**
 * A development server: `start()` on localhost:4000 that prints the URLs of the endpoints, docs and
 * OpenAPI document, then one line per completed or failed request (`formatQueryEvent`). Stops with
 * `stop()`, SIGTERM/SIGINT, or when `options.signal` aborts.
 */
export const serveDev = async (api: DevServable, options: ServeDevOptions = {}): Promise<RunningServer> => {
  const unsubscribe = api.queryLogger.on(resultBlind((event) => {
    const line = formatQueryEvent(event)
    if (line !== null) console.log(line)
  }))
  let server: RunningServer
  try {
    await api.runtime.runtime()
    server = await startNodeServer(api.handler, { ...options, port: options.port ?? 4000, hostname: options.hostname ?? "localhost" })
  } catch (error) {
    unsubscribe()
    throw error
  }
  const stopServer = server.stop
  const stop = (): Promise<void> => {
    options.signal?.removeEventListener("abort", stop)
    unsubscribe()
    return stopServer()
  }
  if (options.quiet !== true) console.log(banner(api, server.url))
  if (options.signal?.aborted === true) await stop()
  else options.signal?.addEventListener("abort", stop, { once: true })
  return { ...server, stop }
}
