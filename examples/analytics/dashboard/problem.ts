/**
 * What the page shows instead of a chart when its data does not come: the server's own message
 * for a refused request (the error envelope), or a retry state while the server cannot be reached.
 */
import type { ServeClientError } from "queryserve"
import { createElement as h } from "react"

/** The state of the queries a panel waits on. */
export interface Waiting {
  /** The last failure, while TanStack still retries (failureReason) or after it gave up (error). */
  readonly failure: ServeClientError | null
  readonly retrying: boolean
  readonly failureCount: number
  retry(): void
}

/** Undefined when nothing failed: the panel shows its data (or its loading state). */
export const problemView = ({ failure, retrying, failureCount, retry }: Waiting) => {
  if (failure === null) return undefined
  if (failure.status !== 0) {
    // An answer from the server: its envelope says what is wrong (a wrong key, no tenant, a bad query).
    return h(
      "div",
      { className: "problem", role: "alert" },
      h("strong", null, `${failure.status} ${failure.type ?? "error"}`),
      h("p", null, failure.message)
    )
  }
  return h(
    "div",
    { className: "problem offline", role: "alert" },
    h("strong", null, "The server does not answer"),
    retrying
      ? h("p", null, `Trying again (attempt ${failureCount + 1})…`)
      : h("p", null, "Start it again (npm start), then ", h("button", { type: "button", onClick: retry }, "Retry"))
  )
}
