import cluster from "node:cluster"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { ServeHandler } from "../domain/http.js"
import { reportFailedListen, startClusterPrimary, stopOnPrimaryRequest } from "./cluster.js"
import { DEFAULT_REQUEST_TIMEOUT } from "../adapters/deadlines.js"
import { makeNodeListener, type RequestGate } from "../adapters/node.js"
import { keepServingThroughUncaughtErrors } from "./processErrors.js"
import { answerProtocolErrors } from "./protocolErrors.js"
import {
  checkServerOptions,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
  listenError,
  type NodeServerOptions,
  resolveHostname,
  resolvePort,
  type RunningServer,
  serverUrl,
  startLine
} from "./serverOptions.js"
import { isQueryserveWorker } from "../domain/queryserveWorker.js"
import type { ContractPaths } from "../docs/routes.js"
import { stopOnShutdownSignal } from "./shutdownSignals.js"

export type { NodeServerOptions, RunningServer } from "./serverOptions.js"

const DEFAULT_HEADERS_TIMEOUT = 10_000
const DEFAULT_KEEP_ALIVE_TIMEOUT = 5_000

/** In-flight bookkeeping for a graceful stop. */
class Drain implements RequestGate {
  draining = false
  private inFlight = 0
  private onIdle: (() => void) | undefined = undefined

  enter(): void {
    this.inFlight++
  }

  leave(): void {
    if (--this.inFlight === 0) this.onIdle?.()
  }

  /** Starts refusing new requests; resolves once the admitted ones are answered. */
  start(): Promise<void> {
    this.draining = true
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => (this.onIdle = resolve))
  }
}

/**
 * Stops listening but keeps idle keep-alive connections open: `http.Server#close` would drop them,
 * and a request arriving on one should get a clear 503 with `Connection: close` instead of a reset.
 */
const stopListening = (server: Server): void => {
  const closeIdleConnections = server.closeIdleConnections
  server.closeIdleConnections = () => {}
  try {
    server.close()
  } finally {
    server.closeIdleConnections = closeIdleConnections
  }
}

/** Resolves after the event loop has polled its sockets once more: the second immediate runs in the next loop turn. */
const afterNextPoll = (): Promise<void> =>
  new Promise((resolve) => setImmediate(() => setImmediate(resolve)))

const listen = (server: Server, port: number, hostname: string): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, hostname, () => {
      server.off("error", reject)
      resolve((server.address() as AddressInfo).port)
    })
  })

const startSingleServer = async (handler: ServeHandler, options: NodeServerOptions): Promise<RunningServer> => {
  const hostname = resolveHostname(options.hostname)
  const drain = new Drain()
  // Node's own limits against slow clients: the whole request (408) and its headers must arrive in time.
  const requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT
  const headersTimeout = Math.min(options.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT, requestTimeout || Infinity)
  const listener = makeNodeListener(handler, options, drain)
  const server = createServer(
    {
      requestTimeout,
      headersTimeout,
      // Node checks both every 30 s by default, too coarse for a 10 s headers timeout.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.round(headersTimeout / 4))),
      // The listener checks Host itself, so that a request without one gets the ErrorEnvelope too.
      requireHostHeader: false
    },
    listener
  )
  server.keepAliveTimeout = options.keepAliveTimeout ?? DEFAULT_KEEP_ALIVE_TIMEOUT
  answerProtocolErrors(server, listener, handler.corsHeaders)
  const requestedPort = resolvePort(options.port)
  const port = await listen(server, requestedPort, hostname).catch((error: unknown) =>
    reportFailedListen(listenError(error, requestedPort, hostname)))

  let stopped: Promise<void> | undefined
  const closed = new Promise<void>((resolve) => server.once("close", () => resolve()))
  const stop = (): Promise<void> => (stopped ??= gracefulStop())
  const unsubscribeSignals = options.handleSignals === false ? undefined : stopOnShutdownSignal(stop)
  if (options.handleUncaughtErrors !== false) void closed.then(keepServingThroughUncaughtErrors())
  const unsubscribePrimary = cluster.isWorker ? stopOnPrimaryRequest(stop) : undefined

  const gracefulStop = async (): Promise<void> => {
    unsubscribeSignals?.()
    unsubscribePrimary?.()
    stopListening(server)
    const force = setTimeout(() => server.closeAllConnections(), options.gracefulShutdownTimeout ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT)
    force.unref()
    await Promise.race([drain.start(), closed])
    // A request may already sit unread in an idle connection's socket (it arrived with the signal, or
    // while the last answer was written): one more poll of the event loop reads it and answers it 503.
    await afterNextPoll()
    // Answered connections either carry `Connection: close` or sit idle: close the idle ones now.
    server.closeIdleConnections()
    await closed
    clearTimeout(force)
  }

  return { server, port, hostname, url: serverUrl(hostname, port), stop }
}

/**
 * Boots a node:http server for a ServeHandler, with body limit, request timeout, slow-client
 * timeouts and graceful shutdown. With `workers > 1` the calling process becomes a node:cluster
 * primary that forks the workers; each worker runs the same program and serves in its own process.
 * Given the API's contract paths (as `api.start()` gives them), it prints one start line unless
 * `quiet`: once per program, by the primary of a cluster and not by each worker.
 */
export const startNodeServer = async (
  handler: ServeHandler,
  options: NodeServerOptions = {},
  announce?: ContractPaths
): Promise<RunningServer> => {
  checkServerOptions(options)
  const running = await ((options.workers ?? 1) > 1 && cluster.isPrimary ? startClusterPrimary(options) : startSingleServer(handler, options))
  if (announce !== undefined && options.quiet !== true && !isQueryserveWorker()) console.log(startLine(running.url, announce))
  return running
}
