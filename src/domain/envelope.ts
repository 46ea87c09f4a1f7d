import type { ErrorType, ServeError } from "./errors.js"

/** The body of every error response. */
export interface ErrorEnvelope {
  readonly error: {
    readonly type: ErrorType | (string & {})
    readonly message: string
    readonly details?: Readonly<Record<string, unknown>>
  }
}

interface ErrorResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>> | undefined
  readonly envelope: ErrorEnvelope
}

const envelope = (
  type: ErrorType | (string & {}),
  message: string,
  details?: Readonly<Record<string, unknown>>
): ErrorEnvelope => ({ error: details === undefined ? { type, message } : { type, message, details } })

/** The one mapping from the error union onto HTTP status and ErrorEnvelope. */
export const toErrorResponse = (error: ServeError): ErrorResponse => {
  switch (error._tag) {
    case "ValidationError":
      return { status: 400, headers: error.headers, envelope: envelope("VALIDATION_ERROR", error.message, { issues: error.issues }) }
    case "Unauthorized":
      return { status: 401, headers: error.headers, envelope: envelope("UNAUTHORIZED", error.message, { reason: error.reason }) }
    case "Forbidden":
      return {
        status: 403,
        headers: error.headers,
        envelope: envelope(
          "FORBIDDEN",
          error.message,
          {
            reason: error.reason,
            ...(error.required === undefined ? {} : { required: error.required }),
            ...(error.actual === undefined ? {} : { actual: error.actual })
          }
        )
      }
    case "NotFound":
      return error.allow === undefined
        ? { status: 404, headers: error.headers, envelope: envelope("NOT_FOUND", error.message) }
        : {
          status: 405,
          headers: { ...error.headers, allow: error.allow.join(", ") },
          envelope: envelope("NOT_FOUND", error.message, { allow: error.allow })
        }
    case "NotAcceptable":
      return {
        status: 406,
        headers: error.headers,
        envelope: envelope("VALIDATION_ERROR", error.message, { available: error.available })
      }
    case "RateLimited":
      return {
        status: 429,
        headers: { ...error.headers, "retry-after": String(error.retryAfterSeconds) },
        envelope: envelope("RATE_LIMITED", error.message, { retryAfterSeconds: error.retryAfterSeconds })
      }
    case "PayloadTooLarge":
      return {
        status: 413,
        headers: error.headers,
        envelope: envelope("PAYLOAD_TOO_LARGE", error.message, { limitBytes: error.limitBytes })
      }
    case "GatewayTimeout":
      return {
        status: 504,
        headers: error.headers,
        envelope: envelope("GATEWAY_TIMEOUT", error.message, { timeoutMs: error.timeoutMs })
      }
    case "QueryFailure":
      return {
        status: 500,
        headers: error.headers,
        envelope: envelope("QUERY_FAILURE", error.message, error.queryId === undefined ? undefined : { queryId: error.queryId })
      }
    case "DatabaseUnreachable":
      return { status: 503, headers: error.headers, envelope: envelope("DATABASE_UNREACHABLE", error.message) }
    case "ServiceUnavailable":
      return { status: 503, headers: error.headers, envelope: envelope("SERVICE_UNAVAILABLE", error.message) }
    case "InternalError":
      return { status: 500, headers: error.headers, envelope: envelope("INTERNAL_SERVER_ERROR", "An unexpected error occurred") }
    case "ServeHttpError":
      return { status: error.status, headers: error.headers, envelope: envelope(error.type, error.message, error.details) }
  }
}
