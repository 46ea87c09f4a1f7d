/**
 * The abort controller the SDK's Server makes for each request it handles, on the direct path.
 *
 * The Server's request handling makes a `new AbortController()` per request, so that a later
 * `notifications/cancelled` of the same session, or closing the transport, can stop the handler. A
 * request on the direct path can be neither: it has no session (a cancellation arrives in another
 * HTTP request, which another Server answers) and its pooled Server is never closed. On Node 20 that
 * controller was the costliest object of a tool call: its signal is an EventTarget whose prototype
 * is set after creation, and its garbage survives young-generation collections (in process, a
 * `tools/call` took 21 µs with it and 14 µs without, its collections three times longer).
 *
 * So while the Server takes a request on the direct path (synchronously: it makes the controller
 * before the handler runs, in a later microtask), `AbortController` is one whose signal is a single
 * real, never-aborted AbortSignal. Where the global cannot be replaced (a runtime that freezes it),
 * the Server keeps the real one.
 */
// The real constructor, kept before any swap: the never-aborted signal is made with it on first use, not
// at module load (workerd forbids making an AbortController at global scope).
const RealAbortController = globalThis.AbortController
let neverAborted: AbortSignal | undefined

class UnabortableController {
  readonly signal: AbortSignal = (neverAborted ??= new RealAbortController().signal)
  abort(): void {}
}

const replaceable = ((): boolean => {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, "AbortController")
  return descriptor !== undefined && "value" in descriptor && descriptor.writable === true
})()

/** Runs `take(message)` (the Server's synchronous request intake) with the unabortable controller as `AbortController`. */
export const withUnabortableRequests = <M>(take: (message: M) => void, message: M): void => {
  if (!replaceable) return take(message)
  const real = globalThis.AbortController
  globalThis.AbortController = UnabortableController as unknown as typeof AbortController
  try {
    take(message)
  } finally {
    globalThis.AbortController = real
  }
}
