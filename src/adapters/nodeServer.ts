import type { ServeHandler } from "../domain/http.js"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createNodeHandler, type NodeHandlerOptions } from "./node.js"

export interface NodeServerOptions extends NodeHandlerOptions {
  /** Default: the PORT environment variable, else 4000. 0 picks a free port. */
  readonly port?: number
  /** Default: the HOST environment variable, else "localhost". */
  readonly hostname?: string
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly hostname: string
  readonly url: string
  /** Stops accepting connections and resolves once open ones are closed. */
  stop(): Promise<void>
}

const defaultPort = (): number => {
  const fromEnv = Number(process.env.PORT)
  return Number.isInteger(fromEnv) && fromEnv >= 0 ? fromEnv : 4000
}

/** Boots a node:http server for a ServeHandler. */
export const startNodeServer = (handler: ServeHandler, options: NodeServerOptions = {}): Promise<RunningServer> => {
  const hostname = options.hostname ?? process.env.HOST ?? "localhost"
  const server = createServer(createNodeHandler(handler, options))
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? defaultPort(), hostname, () => {
      server.off("error", reject)
      const { port } = server.address() as AddressInfo
      const host = hostname.includes(":") ? `[${hostname}]` : hostname
      resolve({
        server,
        port,
        hostname,
        url: `http://${host}:${port}`,
        stop: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()))
            server.closeIdleConnections()
          })
      })
    })
  })
}
