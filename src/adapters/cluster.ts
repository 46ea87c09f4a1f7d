import cluster, { type Worker } from "node:cluster"
import {
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
  type NodeServerOptions,
  resolveHostname,
  type RunningServer,
  serverUrl
} from "./serverOptions.js"
import { stopOnShutdownSignal } from "./shutdownSignals.js"

const SHUTDOWN_MESSAGE = "queryserve:shutdown"
const LISTEN_FAILED_MESSAGE = "queryserve:listen-failed"

/** Set on the workers this primary forks, to its pid: a worker of another cluster manager (pm2) has no such primary. */
const PRIMARY_PID_ENV = "QUERYSERVE_PRIMARY_PID"

/** True in a worker forked by `start({ workers })`, whose primary answers queryserve's IPC messages. */
export const isQueryserveWorker = (): boolean =>
  cluster.isWorker && process.env[PRIMARY_PID_ENV] === String(process.ppid)

/** How long past the drain window a worker may take to exit before it is killed. */
const EXIT_GRACE_MS = 2_000

const isMessageOfType = (message: unknown, type: string): boolean =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

const isShutdownMessage = (message: unknown): boolean => isMessageOfType(message, SHUTDOWN_MESSAGE)

const isListenFailedMessage = (message: unknown): message is { reason: string } =>
  isMessageOfType(message, LISTEN_FAILED_MESSAGE)

/** In a worker: drain and exit when the primary says so (the primary stops by message, not by signal). */
export const stopOnPrimaryRequest = (stop: () => Promise<void>): (() => void) => {
  const onMessage = (message: unknown): void => {
    if (isShutdownMessage(message)) void stop().finally(() => process.exit(0))
  }
  process.on("message", onMessage)
  return () => void process.off("message", onMessage)
}

/**
 * In a worker: tells the primary why this worker cannot listen, then rethrows. The program may catch
 * the error and live on (its IPC channel keeps it running): the primary must hear of it to fail start().
 */
export const reportFailedListen = (error: unknown): never => {
  if (isQueryserveWorker() && process.connected) {
    process.send?.({ type: LISTEN_FAILED_MESSAGE, reason: error instanceof Error ? error.message : String(error) })
  }
  throw error
}

/**
 * The primary of a `workers` cluster: forks the workers (each runs this same program and calls
 * `start()` again, which serves there), resolves once all listen, replaces a worker that dies
 * after it was ready, and stops them all on `stop()` or SIGTERM/SIGINT. Once stopping has begun,
 * start() no longer settles: at start-up only a signal stops, and it ends the program.
 */
export const startClusterPrimary = (options: NodeServerOptions): Promise<RunningServer> => {
  const count = options.workers ?? 1
  const hostname = resolveHostname(options.hostname)
  const drainMs = options.gracefulShutdownTimeout ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT
  const workers = new Set<Worker>()
  const listeningWorkers = new WeakSet<Worker>()
  let stopping: Promise<void> | undefined

  const stopWorker = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      if (worker.isDead()) return resolve()
      const kill = setTimeout(() => worker.process.kill("SIGKILL"), drainMs + EXIT_GRACE_MS)
      worker.once("exit", () => {
        clearTimeout(kill)
        resolve()
      })
      // A worker subscribes to the stop message once it listens: one still starting has nothing to drain,
      // and SIGTERM's default action ends it. A worker whose IPC channel is gone can drain by signal too.
      if (listeningWorkers.has(worker) && worker.isConnected()) worker.send({ type: SHUTDOWN_MESSAGE })
      else worker.process.kill("SIGTERM")
    })

  const stop = (): Promise<void> => (stopping ??= Promise.all([...workers].map(stopWorker)).then(() => unsubscribe?.()))
  const unsubscribe = options.handleSignals === false ? undefined : stopOnShutdownSignal(stop)

  return new Promise((resolve, reject) => {
    let ready = 0
    const failStart = (error: Error): void => {
      if (stopping === undefined) void stop().then(() => reject(error))
    }
    const fork = (): void => {
      const worker = cluster.fork({ [PRIMARY_PID_ENV]: String(process.pid) })
      workers.add(worker)
      worker.once("listening", (address) => {
        listeningWorkers.add(worker)
        // A stop at start-up comes from a signal, which ends the program: start() stays pending meanwhile.
        if (++ready === count && stopping === undefined) {
          resolve({ server: undefined, port: address.port, hostname, url: serverUrl(hostname, address.port), stop })
        }
      })
      worker.on("message", (message: unknown) => {
        if (isListenFailedMessage(message)) failStart(new Error(`A worker could not listen: ${message.reason}`))
      })
      worker.once("exit", (code, signal) => {
        workers.delete(worker)
        if (stopping !== undefined) return
        if (!listeningWorkers.has(worker)) {
          failStart(new Error(`A worker exited before it was listening (code ${code}, signal ${signal})`))
        } else {
          console.error(`[queryserve] worker ${worker.process.pid} exited (code ${code}, signal ${signal}); starting a new one`)
          fork()
        }
      })
    }
    for (let i = 0; i < count; i++) fork()
  })
}
