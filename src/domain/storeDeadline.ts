/** How long a store (Redis) may take to answer by default before the caller treats it as failed. */
export const DEFAULT_STORE_TIMEOUT_MS = 250

/** How often the lag clock samples the event loop while a deadline waits (ms). */
const TICK_MS = 10

/** A tick this much late is timer jitter, not lag (ms). */
const JITTER_MS = 1

/** A deadline is extended by at most this many times its own length: an overloaded process still gives up. */
const MAX_EXTENSION_FACTOR = 20

/**
 * The event loop's lag, added up: how far a repeating timer fires behind its schedule. It ticks only
 * while some deadline waits (so nothing runs at module load or keeps an idle process alive).
 */
class LagClock {
  private committed = 0
  private lastTick = 0
  private waiting = 0
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  /** Lag so far in ms, including the tick that is overdue now. Never decreases. */
  read(): number {
    return this.committed + Math.max(0, performance.now() - this.lastTick - TICK_MS - JITTER_MS)
  }

  /** A deadline starts waiting; returns the lag so far, to subtract at its end. */
  enter(): number {
    if (this.waiting++ === 0) {
      this.lastTick = performance.now()
      this.schedule()
    }
    return this.read()
  }

  leave(): void {
    if (--this.waiting > 0) return
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.committed = this.read()
      this.lastTick = performance.now()
      this.schedule()
    }, TICK_MS)
    // Not every runtime has `unref`: a waiting deadline must not keep a process alive that has nothing else to do.
    ;(this.timer as { unref?: () => void }).unref?.()
  }
}

const lag = new LagClock()

/**
 * Settles like `pending`, or rejects with `new Error(message)` once the store has had `ms` of this
 * process's attention. A client's own command timeout may stop counting once the command is written
 * (node-redis does), so a stalled server that accepted the command would hold the caller for as long
 * as it stalls; this deadline fires all the same.
 *
 * Wall-clock time alone would blame the store for the process's own lag: in a burst, the event loop
 * is busy running other requests while the answer waits unread in the socket (node-redis even writes
 * the command only on a later turn of the loop), and the timer, which runs before the loop reads
 * sockets, would fire first. So the time the loop ran behind during the wait (measured by a timer's
 * drift, see LagClock) is given to the store on top: when `ms` have passed, the deadline is moved on
 * by the lag measured meanwhile, until a stretch passes without lag, or the extensions reach 20 × `ms`.
 * An idle process with a stalled store gives up after `ms` (and a few ms of timer jitter).
 * `ms` ≤ 0 or not finite means no deadline.
 */
export const withDeadline = <A>(pending: PromiseLike<A>, ms: number, message: string): Promise<A> => {
  if (!(ms > 0 && Number.isFinite(ms))) return Promise.resolve(pending)
  return new Promise<A>((resolve, reject) => {
    let counted = lag.enter()
    let extended = 0
    let open = true
    let timer: ReturnType<typeof setTimeout>
    const settle = (): boolean => {
      if (!open) return false
      open = false
      clearTimeout(timer)
      lag.leave()
      return true
    }
    const arm = (wait: number) => {
      timer = setTimeout(expire, wait)
      ;(timer as { unref?: () => void }).unref?.()
    }
    const expire = () => {
      const now = lag.read()
      const behind = Math.min(now - counted, ms * MAX_EXTENSION_FACTOR - extended)
      counted = now
      if (behind >= 1) {
        extended += behind
        return arm(behind)
      }
      if (settle()) reject(new Error(message))
    }
    arm(ms)
    pending.then(
      (value) => void (settle() && resolve(value)),
      (error: unknown) => void (settle() && reject(error))
    )
  })
}
