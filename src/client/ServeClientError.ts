import type { ErrorEnvelope } from "../domain/envelope.js"

/**
 * An error response seen by `createClient`, a 304 Not Modified (to a call's own If-None-Match), a
 * success whose body is not JSON, or no response at all (status 0: the server could not be reached;
 * the fetch failure is the `cause`): its status and, when the server sent one, its ErrorEnvelope.
 */
export class ServeClientError extends Error {
  readonly _tag = "ServeClientError" as const

  constructor(
    readonly status: number,
    /** Undefined when the body was not an ErrorEnvelope (for example a proxy's own error page). */
    readonly envelope: ErrorEnvelope | undefined,
    /** The response's X-Request-Id, to find the request in the server's logs. */
    readonly requestId: string | undefined,
    /** Default: the envelope's message, else `HTTP <status>`. */
    message?: string,
    options?: ErrorOptions
  ) {
    super(message ?? envelope?.error.message ?? `HTTP ${status}`, options)
    this.name = "ServeClientError"
  }

  /** `error.type` of the envelope (VALIDATION_ERROR, UNAUTHORIZED, ...). */
  get type(): string | undefined {
    return this.envelope?.error.type
  }

  get details(): Readonly<Record<string, unknown>> | undefined {
    return this.envelope?.error.details
  }
}

const isErrorEnvelope = (value: unknown): value is ErrorEnvelope => {
  const error = typeof value === "object" && value !== null ? (value as { error?: unknown }).error : undefined
  return typeof error === "object" && error !== null &&
    typeof (error as { type?: unknown }).type === "string" && typeof (error as { message?: unknown }).message === "string"
}

/** The envelope in an error response's body, if that is what it holds. */
export const parseErrorEnvelope = (body: string): ErrorEnvelope | undefined => {
  try {
    const parsed: unknown = JSON.parse(body)
    return isErrorEnvelope(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}
