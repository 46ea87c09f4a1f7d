/**
 * The process-level safety net of `startNodeServer`. Without it, Node ends the process on an
 * exception thrown outside any request's answer (a handler's timer that throws after the answer
 * was sent) and on a promise rejection nobody handles (a promise a handler created and dropped):
 * every other request in flight, of every tenant, would be lost with it. While a server runs, such
 * errors are logged and the server keeps serving. An application that listens for these events
 * itself decides what happens, and this net stays silent.
 *
 * Which request caused the error is not known here: tracking it would need an AsyncLocalStorage
 * context around every request, which on Node 20 slows every promise in the process. The logged
 * stack points at the code.
 */
type Subscriber = object

const subscribers = new Set<Subscriber>()

const othersListen = (event: "uncaughtException" | "unhandledRejection"): boolean => process.listenerCount(event) > 1

const onUncaughtException = (error: Error): void => {
  if (othersListen("uncaughtException")) return
  console.error("[queryserve] uncaught exception outside any answer; the server keeps serving:", error)
}

const onUnhandledRejection = (reason: unknown): void => {
  if (othersListen("unhandledRejection")) return
  console.error("[queryserve] unhandled promise rejection; the server keeps serving:", reason)
}

/** Keeps the process serving through uncaught errors until the returned function is called (by the last server to stop). */
export const keepServingThroughUncaughtErrors = (): (() => void) => {
  const subscriber: Subscriber = {}
  if (subscribers.size === 0) {
    process.on("uncaughtException", onUncaughtException)
    process.on("unhandledRejection", onUnhandledRejection)
  }
  subscribers.add(subscriber)
  return () => {
    if (!subscribers.delete(subscriber) || subscribers.size > 0) return
    process.off("uncaughtException", onUncaughtException)
    process.off("unhandledRejection", onUnhandledRejection)
  }
}
