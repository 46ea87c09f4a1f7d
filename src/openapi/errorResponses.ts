import type { ErrorType } from "../domain/errors.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import type { ServeEndpoint } from "./endpoint.js"
import type { HeaderComponents } from "./headers.js"

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
  /** Names of the headers this answer carries besides X-Request-Id, Vary and those of the endpoint. */
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
    // rateLimit's 429s also carry its X-RateLimit-* headers (an endpoint's own, see ErrorResponses).
    description: "RATE_LIMITED: too many requests in the current window, or too many failed authentications from this address.",
    headers: ["Retry-After"]
  }],
  [500, { name: "InternalServerError", description: "INTERNAL_SERVER_ERROR or QUERY_FAILURE. Nothing of the original error is exposed." }],
  [503, { name: "ServiceUnavailable", description: "DATABASE_UNREACHABLE or SERVICE_UNAVAILABLE." }],
  [504, { name: "GatewayTimeout", description: "GATEWAY_TIMEOUT: the handler did not finish within the request timeout." }]
])

const specFor = (status: number): ErrorResponseSpec =>
  ERROR_RESPONSES.get(status) ?? { name: `Error${status}`, description: `An error answered with status ${status}.` }

export const errorResponseName = (status: number): string => specFor(status).name

// Answered before any middleware runs (body, credentials, guards, validation): without the headers
// middlewares and the result cache set.
const BEFORE_MIDDLEWARES: ReadonlySet<number> = new Set([400, 401, 403, 413])

/**
 * The error statuses of one document, and the headers their answers carry. An error given once an
 * endpoint's middlewares ran (its handler's, 406, a middleware's own 429) keeps their headers and
 * the result cache's (`X-RateLimit-*`, `X-Cache`): the one shared response lists every header some
 * endpoint sends with it. Vary may come with any answer (CORS sets `Vary: Origin`).
 */
export class ErrorResponses {
  private readonly headersByStatus = new Map<number, Set<string>>()

  add(endpoint: ServeEndpoint): void {
    for (const status of endpoint.errorStatuses) {
      let names = this.headersByStatus.get(status)
      if (names === undefined) this.headersByStatus.set(status, (names = new Set()))
      if (!BEFORE_MIDDLEWARES.has(status)) for (const name of endpoint.responseHeaders) names.add(name)
    }
  }

  /** `components.responses` for the error statuses used, in status order. */
  components(headers: HeaderComponents): Record<string, unknown> {
    const responses: Record<string, unknown> = {}
    for (const [status, names] of [...this.headersByStatus].sort(([a], [b]) => a - b)) {
      const spec = specFor(status)
      responses[spec.name] = {
        description: spec.description,
        headers: headers.refs(["X-Request-Id", ...(spec.headers ?? []), ...names, "Vary"]),
        content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` } } }
      }
    }
    return responses
  }
}
