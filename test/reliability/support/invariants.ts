/**
 * What every answer of the server must satisfy, whatever was sent: a documented status, the
 * ErrorEnvelope on errors, no internals in a 5xx, and a safe `X-Request-Id`.
 */
import { header, type RawOutcome, type RawResponse } from "./rawClient.js"

/**
 * The statuses queryserve documents. 431 and 400 also cover what node:http refuses before any
 * listener runs (headers over 16 KiB, malformed requests); startNodeServer answers those too, and 408
 * when a request is not received within `requestTimeout` (the fault API's is 400 ms, so a large body
 * behind a hanging handler can get 408 as well as 504).
 */
export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([200, 204, 304, 400, 401, 403, 404, 405, 406, 408, 413, 429, 431, 500, 503, 504])

export const ERROR_TYPES: ReadonlySet<string> = new Set([
  "VALIDATION_ERROR",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "QUERY_FAILURE",
  "DATABASE_UNREACHABLE",
  "RATE_LIMITED",
  "NOT_FOUND",
  "PAYLOAD_TOO_LARGE",
  "GATEWAY_TIMEOUT",
  "SERVICE_UNAVAILABLE",
  "INTERNAL_SERVER_ERROR"
])

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Traces of internals: stack frames, file paths, SQL, the fault handlers' secrets. */
const INTERNALS = [
  /\bat .+:\d+:\d+/,
  new RegExp(`node_modules|file://|${escapeRegExp(process.cwd())}`),
  /\bSELECT\b[\s\S]*\bFROM\b/i,
  /hunter2/,
  /late failure|leaked rejection/
]

/** The whole body of every unexpected failure: nothing about its cause. */
const INTERNAL_ERROR_BODY = JSON.stringify({ error: { type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" } })

export type Violation = "lost" | "undocumented status" | "bad envelope" | "bad success body" | "leak" | "bad request id"

export interface Expectation {
  readonly headRequest: boolean
  /** The id the answer must echo, when the request sent a safe one in a well-formed request. */
  readonly echoedRequestId: string | undefined
  /** The raw request, so a message that quotes the caller's own input is not taken for a leak. */
  readonly sent: string
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isErrorEnvelope = (value: unknown): value is { error: { type: string; message: string; details?: unknown } } => {
  if (typeof value !== "object" || value === null || Object.keys(value).join() !== "error") return false
  const error = (value as { error: unknown }).error
  if (typeof error !== "object" || error === null) return false
  const { type, message, details } = error as Record<string, unknown>
  return typeof type === "string" && ERROR_TYPES.has(type) && typeof message === "string" &&
    (details === undefined || (typeof details === "object" && details !== null && !Array.isArray(details)))
}

const leaks = (response: RawResponse, sent: string): boolean =>
  (response.status === 500 && response.body !== "" && response.body !== INTERNAL_ERROR_BODY) ||
  INTERNALS.some((pattern) => pattern.test(response.body) && !pattern.test(sent))

/** Headers the error mapping promises with some statuses. */
const REQUIRED_ERROR_HEADERS: ReadonlyMap<number, string> = new Map([[405, "allow"], [429, "retry-after"]])

const envelopeProblem = (response: RawResponse, headRequest: boolean): boolean => {
  if (response.status < 400) return false
  if (header(response, "content-type")?.startsWith("application/json") !== true) return true
  const required = REQUIRED_ERROR_HEADERS.get(response.status)
  if (required !== undefined && !response.headers.has(required)) return true
  return !headRequest && !isErrorEnvelope(parseJson(response.body))
}

/** A 200's JSON or NDJSON body must parse. */
const successBodyProblem = (response: RawResponse, headRequest: boolean): boolean => {
  if (response.status !== 200 || headRequest) return false
  const contentType = header(response, "content-type") ?? ""
  if (contentType.startsWith("application/json")) return parseJson(response.body) === undefined
  if (contentType.startsWith("application/x-ndjson")) {
    return response.body.split("\n").some((line) => line !== "" && parseJson(line) === undefined)
  }
  return false
}

const requestIdProblem = (response: RawResponse, echoed: string | undefined): boolean => {
  const ids = response.headers.get("x-request-id") ?? []
  if (ids.length !== 1 || !SAFE_REQUEST_ID.test(ids[0]!)) return true
  return echoed !== undefined && ids[0] !== echoed
}

/** Every invariant the outcome breaks (none for a good answer). */
export const violations = (outcome: RawOutcome, expectation: Expectation): ReadonlyArray<Violation> => {
  if (!outcome.answered) return ["lost"]
  const { response } = outcome
  const found: Array<Violation> = []
  if (!DOCUMENTED_STATUSES.has(response.status)) found.push("undocumented status")
  if (envelopeProblem(response, expectation.headRequest)) found.push("bad envelope")
  if (successBodyProblem(response, expectation.headRequest)) found.push("bad success body")
  if (leaks(response, expectation.sent)) found.push("leak")
  if (requestIdProblem(response, expectation.echoedRequestId)) found.push("bad request id")
  return found
}
