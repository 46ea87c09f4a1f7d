import type { ServeRequest } from "../domain/http.js"
import type { MaybePromise } from "../domain/maybePromise.js"
import { TransportRequest } from "../domain/transportRequest.js"

/**
 * Settles a pending execution with `succeed`/`fail`, unless the request's deadline passes first:
 * then it fails at once with the adapter's timeout error (504), and the late outcome is dropped.
 * Only requests from queryserve's adapters carry a deadline; others just wait.
 */
export const settleBeforeDeadline = <A>(
  pending: PromiseLike<unknown>,
  request: ServeRequest,
  succeed: (value: unknown) => MaybePromise<A>,
  fail: (error: unknown) => A
): Promise<A> => {
  if (!(request instanceof TransportRequest)) return Promise.resolve(pending).then(succeed, fail)
  return new Promise<A>((resolve) => {
    let settled = false
    let unsubscribe: (() => void) | undefined
    const finish = (outcome: () => MaybePromise<A>): void => {
      if (settled) return
      settled = true
      unsubscribe?.()
      resolve(outcome())
    }
    unsubscribe = request.onExpire((error) => finish(() => fail(error)))
    pending.then((value) => finish(() => succeed(value)), (error: unknown) => finish(() => fail(error)))
  })
}
