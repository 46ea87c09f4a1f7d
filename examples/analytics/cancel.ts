/**
 * Cancellation as the drivers share it: a request's `ctx.signal` aborts when its client leaves or
 * its timeout answers 504, and the query it started should stop then instead of holding a
 * connection for an answer nobody reads.
 */

/**
 * Runs `work`, calling `cancel` (which makes the database stop it) if `signal` aborts meanwhile.
 * Fails with `signal.reason` when the signal had aborted already (nothing starts) or aborted while
 * `work` ran and it then failed: how the statement died (DuckDB's "Interrupted!", Postgres' 57014) is
 * the abort's doing, and the request ends as its own abort. Resolves only once `work` has settled,
 * so a connection is handed on only when its statement is over.
 */
export const cancellable = async <A>(
  signal: AbortSignal | undefined,
  work: () => Promise<A>,
  cancel?: () => void
): Promise<A> => {
  signal?.throwIfAborted()
  if (cancel !== undefined) signal?.addEventListener("abort", cancel, { once: true })
  try {
    return await work()
  } catch (error) {
    throw signal?.aborted ? signal.reason : error
  } finally {
    if (cancel !== undefined) signal?.removeEventListener("abort", cancel)
  }
}
