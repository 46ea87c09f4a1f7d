import { type QueryKey, useQueryClient } from "@tanstack/react-query"
import { ServeClientError } from "../client/ServeClientError.js"

/** Statuses that may pass a few seconds later: no response (0), a timeout, a server failure. */
const isTransient = (error: unknown): boolean =>
  error instanceof ServeClientError && (error.status === 0 || error.status === 408 || error.status >= 500)

/**
 * The hooks' retry policy: up to 3 more tries (TanStack's own count) for what may pass later; none for
 * the other refusals (401, 403, 400 …: asking again gets the same answer; 429: a rate limit's window
 * outlasts the backoff, and every try counts against it) or for input the client refused to send.
 */
export const retryTransient = (failureCount: number, error: unknown): boolean => failureCount < 3 && isTransient(error)

type Retry = boolean | number | ((failureCount: number, error: ServeClientError) => boolean)

/**
 * The `retry` a hook passes to TanStack: the hook's own option, else the QueryClient's default for the
 * key (`setQueryDefaults`, `defaultOptions.queries`), else `retryTransient`.
 */
export const useRetry = (queryKey: QueryKey, given: Retry | undefined): Retry => {
  const client = useQueryClient()
  return given ?? client.getQueryDefaults(queryKey).retry ?? client.getDefaultOptions().queries?.retry ?? retryTransient
}
