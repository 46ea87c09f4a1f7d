/** How long a store (Redis) may take to answer by default before the caller treats it as failed. */
export const DEFAULT_STORE_TIMEOUT_MS = 250

/**
 * Settles like `pending`, or rejects with `new Error(message)` once `ms` have passed first. A client's
 * own command timeout may stop counting once the command is written (node-redis does), so a stalled
 * server that accepted the command would hold the caller for as long as it stalls; this deadline fires
 * all the same. The timer is cleared when `pending` settles in time; `ms` ≤ 0 or not finite means none.
 */
export const withDeadline = <A>(pending: PromiseLike<A>, ms: number, message: string): Promise<A> => {
  if (!(ms > 0 && Number.isFinite(ms))) return Promise.resolve(pending)
  return new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms)
    // A late answer must not keep a process alive that has nothing else to do (not every runtime has `unref`).
    ;(timer as { unref?: () => void }).unref?.()
    pending.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })
}
