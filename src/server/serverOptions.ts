import type { Server } from "node:http"
import type { NodeHandlerOptions } from "../adapters/node.js"
import { checkMilliseconds } from "../adapters/transport.js"
import { DEFAULT_RESPONSE_TIMEOUT } from "../adapters/nodeConnection.js"
import type { ContractPaths } from "../docs/routes.js"

export interface NodeServerOptions extends NodeHandlerOptions {
  /** Default: the PORT environment variable, else 4000. 0 picks a free port. */
  readonly port?: number
  /** Default: the HOST environment variable, else "localhost". */
  readonly hostname?: string
  /** Milliseconds `stop()` (or SIGTERM/SIGINT) waits for in-flight requests before closing their connections (default 10 s). */
  readonly gracefulShutdownTimeout?: number
  /** Milliseconds a client has to send the request headers (default 10 s): slow-loris protection. */
  readonly headersTimeout?: number
  /** Milliseconds an idle keep-alive connection stays open (default 5 s). */
  readonly keepAliveTimeout?: number
  /** Drain and stop on SIGTERM/SIGINT (default true). */
  readonly handleSignals?: boolean
  /**
   * While the server runs, log uncaught exceptions and unhandled promise rejections and keep serving
   * (default true), unless the application listens for them itself. false leaves Node's default: the
   * process exits.
   */
  readonly handleUncaughtErrors?: boolean
  /** Run this many processes with node:cluster, sharing the port (default 1: this process only). */
  readonly workers?: number
  /** Print no start line (default false: `start()` prints the URL and the docs URL on stdout once it listens). */
  readonly quiet?: boolean
}

export interface RunningServer {
  /** The node:http server; undefined in the primary process of a `workers` cluster. */
  readonly server: Server | undefined
  readonly port: number
  readonly hostname: string
  readonly url: string
  /** Drains like SIGTERM does: refuses new requests with 503, lets in-flight ones finish, then closes. */
  stop(): Promise<void>
}

export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT = 10_000

export const resolvePort = (port: number | undefined): number => {
  if (port !== undefined) return port
  const fromEnv = Number(process.env.PORT)
  return process.env.PORT !== undefined && Number.isInteger(fromEnv) && fromEnv >= 0 ? fromEnv : 4000
}

/** An empty name (an unset `HOST=`) would listen on every interface: it counts as none. */
export const resolveHostname = (hostname: string | undefined): string => hostname || process.env.HOST || "localhost"

/**
 * Throws, saying what to change, for server options that could not work: node:http would throw
 * after every answer for an Infinity keep-alive, a timer of NaN or past 2^31 ms fires at once (a
 * drain that cuts every request), and a fractional worker count never reports ready.
 */
export const checkServerOptions = (options: NodeServerOptions): void => {
  checkMilliseconds("gracefulShutdownTimeout", options.gracefulShutdownTimeout, `default ${DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT}`)
  checkMilliseconds("keepAliveTimeout", options.keepAliveTimeout, "default 5000")
  checkMilliseconds("headersTimeout", options.headersTimeout, "default 10000")
  // Checked here too: a cluster's primary builds no listener, and its workers would each fail alone.
  checkMilliseconds("responseTimeoutMs", options.responseTimeoutMs, `0 for none; default ${DEFAULT_RESPONSE_TIMEOUT}`)
  const workers = options.workers
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 1)) {
    throw new TypeError(`workers must be a whole number of processes, 1 or more, not ${String(workers)}`)
  }
}

export const serverUrl = (hostname: string, port: number): string =>
  `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`

/** The one line `start()` prints: where the server listens and where its contract is published. */
export const startLine = (url: string, paths: ContractPaths | undefined): string =>
  paths?.docs !== undefined ? `queryserve listening on ${url}, docs at ${url}${paths.docs}`
  : paths?.openapi !== undefined ? `queryserve listening on ${url}, OpenAPI document at ${url}${paths.openapi}`
  : `queryserve listening on ${url}`

/**
 * What listening failed with, said so that it can be acted on: a port in use is a one-line Error
 * naming the port and how to choose another, not node's EADDRINUSE stack.
 */
export const listenError = (error: unknown, port: number, hostname: string): unknown =>
  (error as { code?: unknown } | null)?.code === "EADDRINUSE"
    ? new Error(`Port ${port} is already in use on ${hostname}: pass another \`port\` to start() (0 picks a free one)`)
    : error
