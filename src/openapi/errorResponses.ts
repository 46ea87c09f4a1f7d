import type { ErrorType } from "../domain/errors.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import { type HeaderComponents, RATE_LIMIT_HEADERS } from "./headers.js"

// A record rather than a list so the compiler insists on every ErrorType.
const ERROR_TYPES: Readonly<Record<ErrorType, null>> = {
  VALIDATION_ERROR: null,
  UNAUTHORIZED: null,
  FORBIDDEN: null,
  QUERY_FAILURE: null,
  DATABASE_UNREACHABLE: null,
  RATE_LIMITED: null,
  NOT_FOUND: null,
  PAYLOAD_TOO_LARGE: null,
  GATEWAY_TIMEOUT: null,
  SERVICE_UNAVAILABLE: null,
  INTERNAL_SERVER_ERROR: null
}

export const ERROR_ENVELOPE = "ErrorEnvelope"

/** JSON Schema of the body of every error response. */
export const errorEnvelopeSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["type", "message"],
      properties: {
        type: {
          type: "string",
          description: "Branch on this field. A ServeHttpError thrown by a handler may carry a type of its own.",
          examples: Object.keys(ERROR_TYPES)
        },
        message: { type: "string", description: "Human-friendly summary." },
        details: {
          type: "object",
          description: "Optional metadata; further keys may appear.",
          properties: {
            issues: {
              type: "array",
              description: "Validation issues (VALIDATION_ERROR).",
              items: {
                type: "object",
                required: ["path", "message"],
                properties: {
                  path: { type: "array", items: { type: ["string", "integer"] } },
                  message: { type: "string" }
                }
              }
            },
            reason: {
              type: "string",
              examples: ["missing_credentials", "invalid_credentials", "missing_role", "missing_scope", "missing_tenant"]
            },
            required: { type: "array", items: { type: "string" }, description: "The roles or scopes asked for (FORBIDDEN)." },
            queryId: { type: "string" }
          }
        }
      }
    }
  }
}

interface ErrorResponseSpec {
  readonly name: string
  readonly description: string
  /** Names of the headers this answer carries besides X-Request-Id. */
  readonly headers?: ReadonlyArray<string>
}

const ERROR_RESPONSES: ReadonlyMap<number, ErrorResponseSpec> = new Map([
  [400, { name: "BadRequest", description: "VALIDATION_ERROR: the input failed validation (`details.issues`) or the body is not valid JSON." }],
  [401, { name: "Unauthorized", description: "UNAUTHORIZED: credentials are missing (`details.reason` missing_credentials) or invalid (invalid_credentials)." }],
  [403, { name: "Forbidden", description: "FORBIDDEN: a required role, scope or tenant is missing (`details.reason`, `details.required`)." }],
  [404, { name: "NotFound", description: "NOT_FOUND" }],
  [406, {
    name: "NotAcceptable",
    description: "VALIDATION_ERROR: `Accept` asked for CSV or NDJSON and the result is not a list of rows (`details.available`)."
  }],
  [413, { name: "PayloadTooLarge", description: "PAYLOAD_TOO_LARGE: the request body exceeds the server's body limit." }],
  [429, {
    name: "TooManyRequests",
    // The X-RateLimit-* headers come with rateLimit's 429s; authFailureLimit's carry Retry-After only.
    description: "RATE_LIMITED: too many requests in the current window, or too many failed authentications from this address.",
    headers: ["Retry-After", ...RATE_LIMIT_HEADERS]
  }],
  [500, { name: "InternalServerError", description: "INTERNAL_SERVER_ERROR or QUERY_FAILURE. Nothing of the original error is exposed." }],
  [503, { name: "ServiceUnavailable", description: "DATABASE_UNREACHABLE or SERVICE_UNAVAILABLE." }],
  [504, { name: "GatewayTimeout", description: "GATEWAY_TIMEOUT: the handler did not finish within the request timeout." }]
])

const specFor = (status: number): ErrorResponseSpec =>
  ERROR_RESPONSES.get(status) ?? { name: `Error${status}`, description: `An error answered with status ${status}.` }

export const errorResponseName = (status: number): string => specFor(status).name

/** `components.responses` for the error statuses used, in status order. */
export const errorResponseComponents = (statuses: ReadonlySet<number>, headers: HeaderComponents): Record<string, unknown> => {
  const responses: Record<string, unknown> = {}
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const spec = specFor(status)
    responses[spec.name] = {
      description: spec.description,
      headers: headers.refs(["X-Request-Id", ...(spec.headers ?? [])]),
      content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` } } }
    }
  }
  return responses
}
