import cluster, { type Worker } from "node:cluster"
import {
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
  type NodeServerOptions,
  resolveHostname,
  type RunningServer,
  serverUrl
} from "./serverOptions.js"
import { isQueryserveWorker, PRIMARY_PID_ENV } from "../domain/queryserveWorker.js"
import { stopOnShutdownSignal } from "./shutdownSignals.js"

const SHUTDOWN_MESSAGE = "queryserve:shutdown"
const LISTEN_FAILED_MESSAGE = "queryserve:listen-failed"

/** How long past the drain window a worker may take to exit before it is killed. */
const EXIT_GRACE_MS = 2_000

/**
 * Replacing workers: one that served this long before it died is replaced at once; one that died
 * sooner, or never listened, is replaced after a wait that doubles with each such failure in a row
 * (as pm2's restart backoff does), so that a program that cannot start again (a database down at
 * boot, a crash on start-up) is retried without forking in a tight loop.
 */
const STABLE_MS = 10_000
const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 15_000

const retryDelay = (failures: number): number =>
  failures === 0 ? 0 : Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1))

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
 * (with a growing wait while replacements keep failing), and stops them all on `stop()` or
 * SIGTERM/SIGINT. A worker that fails before start() resolved makes it reject; once it resolved,
 * a failure is retried, never a reason to stop the others. Once stopping has begun, start() no
 * longer settles: at start-up only a signal stops, and it ends the program.
 */
export const startClusterPrimary = (options: NodeServerOptions): Promise<RunningServer> => {
  const count = options.workers ?? 1
  const hostname = resolveHostname(options.hostname)
  const drainMs = options.gracefulShutdownTimeout ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT
  const workers = new Set<Worker>()
  /** When each worker began to listen (performance.now()). */
  const listenedAt = new WeakMap<Worker, number>()
  const pendingForks = new Set<ReturnType<typeof setTimeout>>()
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
      if (listenedAt.has(worker) && worker.isConnected()) worker.send({ type: SHUTDOWN_MESSAGE })
      else worker.process.kill("SIGTERM")
    })

  const stop = (): Promise<void> => {
    if (stopping !== undefined) return stopping
    for (const timer of pendingForks) clearTimeout(timer)
    return (stopping = Promise.all([...workers].map(stopWorker)).then(() => unsubscribe?.()))
  }
  const unsubscribe = options.handleSignals === false ? undefined : stopOnShutdownSignal(stop)

  return new Promise((resolve, reject) => {
    let ready = 0
    let started = false
    /** Replacements in a row that did not last (see STABLE_MS). */
    let failures = 0
    const failStart = (error: Error): void => {
      if (stopping === undefined) void stop().then(() => reject(error))
    }
    const replace = (why: string, lasted: boolean): void => {
      failures = lasted ? 0 : failures + 1
      const delay = retryDelay(failures)
      console.error(`[queryserve] ${why}; starting a new one${delay === 0 ? "" : ` in ${delay} ms`}`)
      if (delay === 0) return fork()
      const timer = setTimeout(() => {
        pendingForks.delete(timer)
        fork()
      }, delay)
      pendingForks.add(timer)
    }
    const fork = (): void => {
      const worker = cluster.fork({ [PRIMARY_PID_ENV]: String(process.pid) })
      workers.add(worker)
      worker.once("listening", (address) => {
        listenedAt.set(worker, performance.now())
        // A stop at start-up comes from a signal, which ends the program: start() stays pending meanwhile.
        if (++ready === count && stopping === undefined) {
          started = true
          resolve({ server: undefined, port: address.port, hostname, url: serverUrl(hostname, address.port), stop })
        }
      })
      worker.on("message", (message: unknown) => {
        // Later, the worker's own error ends it (unless the program catches it), and its exit brings a retry.
        if (isListenFailedMessage(message) && !started) failStart(new Error(`A worker could not listen: ${message.reason}`))
      })
      worker.once("exit", (code, signal) => {
        workers.delete(worker)
        if (stopping !== undefined) return
        const since = listenedAt.get(worker)
        const how = `(code ${code}, signal ${signal})`
        if (since === undefined && !started) return failStart(new Error(`A worker exited before it was listening ${how}`))
        replace(
          since === undefined
            ? `worker ${worker.process.pid} exited before it was listening ${how}`
            : `worker ${worker.process.pid} exited ${how}`,
          since !== undefined && performance.now() - since >= STABLE_MS
        )
      })
    }
    for (let i = 0; i < count; i++) fork()
  })
}
