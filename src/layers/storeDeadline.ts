/**
 * `pending`, unless `ms` pass first: then it rejects with an Error carrying `message`. The timer is
 * cleared as soon as either happens, and a late rejection of `pending` is absorbed, so a stalled
 * store (Redis that accepted a command and never answers) costs a request `ms` at most.
 */
export const withDeadline = <A>(pending: PromiseLike<A>, ms: number, message: string): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms)
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
