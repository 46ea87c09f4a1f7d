import * as Data from "effect/Data"

/** The `error.type` values an ErrorEnvelope may carry. */
export type ErrorType =
  | "VALIDATION_ERROR"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "QUERY_FAILURE"
  | "DATABASE_UNREACHABLE"
  | "RATE_LIMITED"
  | "NOT_FOUND"
  | "PAYLOAD_TOO_LARGE"
  | "GATEWAY_TIMEOUT"
  | "SERVICE_UNAVAILABLE"
  | "INTERNAL_SERVER_ERROR"

export interface ValidationIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Extra response headers an error wants on its response (Retry-After, Allow, ...). */
type WithHeaders = { readonly headers?: Readonly<Record<string, string>> }

export class ValidationError extends Data.TaggedError("ValidationError")<
  { readonly message: string; readonly issues: ReadonlyArray<ValidationIssue> } & WithHeaders
> {}

type UnauthorizedReason = "missing_credentials" | "invalid_credentials"
export class Unauthorized extends Data.TaggedError("Unauthorized")<
  { readonly message: string; readonly reason: UnauthorizedReason } & WithHeaders
> {}

/** `origin_not_allowed`: a browser page of another origin reached the MCP endpoint (DNS rebinding protection). */
type ForbiddenReason = "missing_role" | "missing_scope" | "missing_tenant" | "origin_not_allowed"
export class Forbidden extends Data.TaggedError("Forbidden")<
  {
    readonly message: string
    readonly reason: ForbiddenReason
    readonly required?: ReadonlyArray<string>
    /** The caller's own roles or scopes, told only under `security.verboseAuthErrors`. */
    readonly actual?: ReadonlyArray<string>
  } & WithHeaders
> {}

/** Unknown route, or (with `allow`) a known path asked with another method: 405. */
export class NotFound extends Data.TaggedError("NotFound")<
  { readonly message: string; readonly allow?: ReadonlyArray<string> } & WithHeaders
> {}

/** The result cannot be given in the representation the client asked for (e.g. a non-tabular result as CSV): 406. */
export class NotAcceptable extends Data.TaggedError("NotAcceptable")<
  { readonly message: string; readonly available: ReadonlyArray<string> } & WithHeaders
> {}

export class RateLimited extends Data.TaggedError("RateLimited")<
  { readonly message: string; readonly retryAfterSeconds: number } & WithHeaders
> {}

export class PayloadTooLarge extends Data.TaggedError("PayloadTooLarge")<
  { readonly message: string; readonly limitBytes: number } & WithHeaders
> {}

export class GatewayTimeout extends Data.TaggedError("GatewayTimeout")<
  { readonly message: string; readonly timeoutMs: number } & WithHeaders
> {}

export class QueryFailure extends Data.TaggedError("QueryFailure")<
  { readonly message: string; readonly queryId?: string } & WithHeaders
> {}

export class DatabaseUnreachable extends Data.TaggedError("DatabaseUnreachable")<
  { readonly message: string; readonly cause?: unknown } & WithHeaders
> {}

export class ServiceUnavailable extends Data.TaggedError("ServiceUnavailable")<
  { readonly message: string } & WithHeaders
> {}

/** The answer to a request while the server drains or the API is disposed. */
export const shuttingDown = new ServiceUnavailable({ message: "The server is shutting down" })

/** Anything unexpected. `cause` stays in the process: it goes to onError, never onto the wire. */
export class InternalError extends Data.TaggedError("InternalError")<{ readonly cause: unknown } & WithHeaders> {}

export interface ServeHttpErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * The error users throw from handlers and middlewares to answer with a chosen status and type.
 * Status and type are independent; `_tag` makes it part of the union so `catchTag` works on it too.
 */
export class ServeHttpError extends Error {
  readonly _tag = "ServeHttpError" as const
  readonly details: Readonly<Record<string, unknown>> | undefined
  readonly headers: Readonly<Record<string, string>> | undefined
  constructor(
    readonly status: number,
    readonly type: ErrorType | (string & {}),
    message: string,
    options?: ServeHttpErrorOptions
  ) {
    // Only an error status can carry the envelope: a 1xx would break the connection, a 2xx/3xx drop
    // the body, and a status past 599 is no status at all. Refused here, where the mistake is made.
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`ServeHttpError needs an error status, an integer from 400 to 599; got ${status}`)
    }
    super(message)
    this.name = "ServeHttpError"
    this.details = options?.details
    this.headers = options?.headers
  }
}

/** Every failure the pipeline can answer with. */
export type ServeError =
  | ValidationError
  | Unauthorized
  | Forbidden
  | NotFound
  | NotAcceptable
  | RateLimited
  | PayloadTooLarge
  | GatewayTimeout
  | QueryFailure
  | DatabaseUnreachable
  | ServiceUnavailable
  | InternalError
  | ServeHttpError

const SERVE_ERROR_TAGS: ReadonlySet<string> = new Set([
  "ValidationError",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "NotAcceptable",
  "RateLimited",
  "PayloadTooLarge",
  "GatewayTimeout",
  "QueryFailure",
  "DatabaseUnreachable",
  "ServiceUnavailable",
  "InternalError",
  "ServeHttpError"
])

const UNREACHABLE_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "ECONNRESET", "ETIMEDOUT"])

export const isServeError = (value: unknown): value is ServeError =>
  typeof value === "object" && value !== null && SERVE_ERROR_TAGS.has((value as { _tag?: unknown })._tag as string)

/** Classifies anything a stage threw or failed with. */
export const toServeError = (thrown: unknown): ServeError => {
  if (isServeError(thrown)) return thrown
  const code = typeof thrown === "object" && thrown !== null ? (thrown as { code?: unknown }).code : undefined
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) {
    return new DatabaseUnreachable({ message: "The database is unreachable", cause: thrown })
  }
  return new InternalError({ cause: thrown })
}
