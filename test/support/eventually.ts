/** Retries `attempt` every 50 ms until it succeeds, or rethrows its last failure once `timeoutMs` passed. */
export const eventually = async <A>(attempt: () => Promise<A>, timeoutMs = 10_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}
