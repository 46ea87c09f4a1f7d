import { isPromiseLike } from "./maybePromise.js"

/**
 * Calls an observer of requests (a lifecycle hook, a query-log listener) so that its failure goes no
 * further than the log: a throw, or the rejection of the promise an `async` one returns, which would
 * otherwise be an unhandled rejection (the end of a process without a handler for those).
 */
export const callObserver = <A>(failureMessage: string, observer: (arg: A) => unknown, arg: A): void => {
  try {
    const result = observer(arg)
    if (isPromiseLike(result)) result.then(undefined, (error: unknown) => console.error(failureMessage, error))
  } catch (error) {
    console.error(failureMessage, error)
  }
}
