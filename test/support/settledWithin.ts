export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** How `promise` settled within `ms`: `{ value }`, `{ error }`, or "pending". */
export const settledWithin = <A>(promise: Promise<A>, ms: number) =>
  Promise.race([
    promise.then((value) => ({ value }), (error: unknown) => ({ error })),
    sleep(ms).then(() => "pending" as const)
  ])
