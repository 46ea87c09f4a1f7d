import { GatewayTimeout, InternalError } from "../domain/errors.js"
import type { CorsHeaders, ServeResponse } from "../domain/http.js"
import type { TransportRequest } from "../domain/transportRequest.js"
import { adapterErrorResponse } from "./transport.js"

/** Default `requestTimeout` of every adapter: 30 s. */
export const DEFAULT_REQUEST_TIMEOUT = 30_000

export interface Deadline {
  readonly expiresAt: number
  readonly request: TransportRequest
  /** Runs after the request expired and the pipeline had its turn to answer. */
  readonly fallback: (error: GatewayTimeout) => void
}

/**
 * The deadlines of requests still waiting for an async answer. Every request gets the same timeout,
 * so expiry order is arrival order: an insertion-ordered Set is the queue, and one interval timer
 * (running only while the queue is not empty) expires its head. That replaces a `setTimeout` per
 * request, and a synchronous answer never enters the queue at all.
 */
export class DeadlineQueue {
  private readonly pending = new Set<Deadline>()
  private timer: ReturnType<typeof setInterval> | undefined = undefined
  private readonly tickMs: number

  constructor(readonly timeoutMs: number) {
    // Expiry is late by at most one tick: 5 % of the timeout, between 5 ms and 1 s.
    this.tickMs = Math.min(1000, Math.max(5, Math.round(timeoutMs / 20)))
  }

  /** Starts the clock for a request whose answer is pending. */
  track(request: TransportRequest, fallback: (error: GatewayTimeout) => void): Deadline {
    const deadline: Deadline = { expiresAt: performance.now() + this.timeoutMs, request, fallback }
    this.pending.add(deadline)
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.expireDue(), this.tickMs)
      // Deadlines never keep a process alive on their own (not every runtime has `unref`).
      ;(this.timer as { unref?: () => void }).unref?.()
    }
    return deadline
  }

  /** The answer came in time. */
  settle(deadline: Deadline): void {
    this.pending.delete(deadline)
  }

  private expireDue(): void {
    const now = performance.now()
    for (const deadline of this.pending) {
      if (deadline.expiresAt > now) break
      this.pending.delete(deadline)
      const error = new GatewayTimeout({
        message: `The request did not complete within ${this.timeoutMs} ms`,
        timeoutMs: this.timeoutMs
      })
      deadline.request.expire(error)
      // The pipeline answers from `expire` within a few microtasks; any other handler gets a plain 504.
      setTimeout(deadline.fallback, 0, error)
    }
    if (this.pending.size === 0) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}

/** A queue for `requestTimeout`, or none when it is 0 (no timeout). */
export const deadlineQueue = (requestTimeout: number | undefined): DeadlineQueue | undefined => {
  const timeoutMs = requestTimeout ?? DEFAULT_REQUEST_TIMEOUT
  return timeoutMs > 0 && Number.isFinite(timeoutMs) ? new DeadlineQueue(timeoutMs) : undefined
}

/**
 * Hands a pending answer to `deliver`; when the deadline passes first, `deliver` gets the 504 (from
 * the pipeline, or a plain one) and the late answer too: `deliver` keeps the first.
 */
export const deliverInTime = (
  deadlines: DeadlineQueue | undefined,
  request: TransportRequest,
  pending: PromiseLike<ServeResponse>,
  deliver: (response: ServeResponse) => void,
  cors: CorsHeaders | undefined
): void => {
  const deadline = deadlines?.track(request, (error) => deliver(adapterErrorResponse(error, request.headers, cors)))
  const answered = (response: ServeResponse): void => {
    if (deadline !== undefined) deadlines?.settle(deadline)
    deliver(response)
  }
  pending.then(answered, (error: unknown) => answered(adapterErrorResponse(new InternalError({ cause: error }), request.headers, cors)))
}
