const SHUTDOWN_SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGTERM", "SIGINT"]

type Stop = () => Promise<void>

/** Servers that asked to drain on SIGTERM/SIGINT. One process listener per signal serves them all. */
const subscribers = new Set<Stop>()

const onSignal = (signal: NodeJS.Signals): void => {
  // Whoever else listens for the signal owns the process's exit; otherwise we re-raise it once
  // drained, so the process ends the way it would have without us (and a second signal kills at once).
  const othersListen = process.listenerCount(signal) > 1
  const stops = [...subscribers]
  subscribers.clear()
  detach()
  void Promise.allSettled(stops.map((stop) => stop())).then(() => {
    if (!othersListen) process.kill(process.pid, signal)
  })
}

const attach = (): void => {
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal)
}

const detach = (): void => {
  for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal)
}

/** Calls `stop` on SIGTERM/SIGINT; the returned function unsubscribes (and removes the process listeners with the last one). */
export const stopOnShutdownSignal = (stop: Stop): (() => void) => {
  if (subscribers.size === 0) attach()
  subscribers.add(stop)
  return () => {
    if (subscribers.delete(stop) && subscribers.size === 0) detach()
  }
}
