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

/** Set on the workers this primary forks, to its pid: a worker of another cluster manager (pm2) has no such primary. */
const PRIMARY_PID_ENV = "QUERYSERVE_PRIMARY_PID"

/** True in a worker forked by `start({ workers })`, whose primary answers queryserve's IPC messages. */
export const isQueryserveWorker = (): boolean =>
  cluster.isWorker && process.env[PRIMARY_PID_ENV] === String(process.ppid)

/** How long past the drain window a worker may take to exit before it is killed. */
const EXIT_GRACE_MS = 2_000

const isShutdownMessage = (message: unknown): boolean =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === SHUTDOWN_MESSAGE

/** In a worker: drain and exit when the primary says so (the primary stops by message, not by signal). */
export const stopOnPrimaryRequest = (stop: () => Promise<void>): (() => void) => {
  const onMessage = (message: unknown): void => {
    if (isShutdownMessage(message)) void stop().finally(() => process.exit(0))
  }
  process.on("message", onMessage)
  return () => void process.off("message", onMessage)
}

/**
 * The primary of a `workers` cluster: forks the workers (each runs this same program and calls
 * `start()` again, which serves there), resolves once all listen, replaces a worker that dies
 * after it was ready, and stops them all on `stop()` or SIGTERM/SIGINT.
 */
export const startClusterPrimary = (options: NodeServerOptions): Promise<RunningServer> => {
  const count = options.workers ?? 1
  const hostname = resolveHostname(options.hostname)
  const drainMs = options.gracefulShutdownTimeout ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT
  const workers = new Set<Worker>()
  let stopping: Promise<void> | undefined

  const stopWorker = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      if (worker.isDead()) return resolve()
      const kill = setTimeout(() => worker.process.kill("SIGKILL"), drainMs + EXIT_GRACE_MS)
      worker.once("exit", () => {
        clearTimeout(kill)
        resolve()
      })
      // A worker whose IPC channel is gone can still be asked to drain by signal.
      if (worker.isConnected()) worker.send({ type: SHUTDOWN_MESSAGE })
      else worker.process.kill("SIGTERM")
    })

  const stop = (): Promise<void> => (stopping ??= Promise.all([...workers].map(stopWorker)).then(() => unsubscribe?.()))
  const unsubscribe = options.handleSignals === false ? undefined : stopOnShutdownSignal(stop)

  return new Promise((resolve, reject) => {
    let ready = 0
    const fork = (): void => {
      const worker = cluster.fork({ [PRIMARY_PID_ENV]: String(process.pid) })
      workers.add(worker)
      let listening = false
      worker.once("listening", (address) => {
        listening = true
        if (++ready === count) resolve({ server: undefined, port: address.port, hostname, url: serverUrl(hostname, address.port), stop })
      })
      worker.once("exit", (code, signal) => {
        workers.delete(worker)
        if (stopping !== undefined) return
        if (!listening) {
          void stop().then(() => reject(new Error(`A worker exited before it was listening (code ${code}, signal ${signal})`)))
        } else {
          console.error(`[queryserve] worker ${worker.process.pid} exited (code ${code}, signal ${signal}); starting a new one`)
          fork()
        }
      })
    }
    for (let i = 0; i < count; i++) fork()
  })
}
