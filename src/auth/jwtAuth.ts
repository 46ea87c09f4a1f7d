import type { JWTPayload, JWTVerifyGetKey, KeyObject } from "jose"
import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import { ServiceUnavailable, Unauthorized } from "../domain/errors.js"
import { getHeader } from "../domain/http.js"
import { tenantIdOf } from "../tenancy/tenantPlan.js"
import type { DocumentedAuthStrategy } from "../openapi/securityScheme.js"
import { nameList } from "../domain/nameList.js"

/** Where a caller fact is read from: a claim name (taken verbatim, dots included) or a function of the payload. */
export type ClaimReader = string | ((payload: JWTPayload) => unknown)

export interface JwtAuthOptions {
  /** HMAC secret of HS256/HS384/HS512 tokens. */
  readonly secret?: string | Uint8Array
  /** Public key of RS/PS/ES/EdDSA tokens: a CryptoKey, a KeyObject, or an SPKI PEM (then `algorithms[0]` names its algorithm). */
  readonly publicKey?: CryptoKey | KeyObject | string
  /** A JWKS document URL; keys are fetched on first use, cached, and picked by the token's `kid`. */
  readonly jwksUrl?: string | URL
  /** Accepted `alg` values. Default: HS256/384/512 with `secret`; otherwise what the key type allows. */
  readonly algorithms?: ReadonlyArray<string>
  /** Required `iss`: one value or any of several. */
  readonly issuer?: string | ReadonlyArray<string>
  /** Required `aud`: one value or any of several. */
  readonly audience?: string | ReadonlyArray<string>
  /**
   * A token without `exp` would be accepted forever: it is refused (401 `invalid_credentials`) unless
   * this is false. Default true.
   */
  readonly requireExpiry?: boolean
  /**
   * Oldest accepted token, by its `iat`: seconds, or a span such as `"15m"`, `"2 hours"`, `"1d"`.
   * Tokens without `iat` are then refused. Default: no limit.
   */
  readonly maxTokenAge?: number | string
  /**
   * Leeway for `exp`, `nbf`, `maxTokenAge` and the future-`iat` check: seconds, or a span such as `"30s"`.
   * Default 0. A token issued (`iat`) later than now plus this leeway is always refused.
   */
  readonly clockTolerance?: number | string
  /** @deprecated Use `clockTolerance` (same number of seconds). */
  readonly clockToleranceSeconds?: number
  /** Where roles, scopes and the tenant id come from. Defaults: `roles`, `scope` (else `scp`), `tenant_id`. */
  readonly claims?: {
    readonly roles?: ClaimReader
    readonly scopes?: ClaimReader
    readonly tenantId?: ClaimReader
  }
}

/** The caller a verified token resolves to. */
export interface JwtAuthContext extends ServeAuthContext {
  readonly subject: string | undefined
  readonly roles: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly tenantId?: string
  /** Every claim of the verified token. */
  readonly claims: JWTPayload
}

const HMAC_ALGORITHMS = ["HS256", "HS384", "HS512"]
const BEARER = /^Bearer[ \t]+(\S+)\s*$/i

const read = (payload: JWTPayload, reader: ClaimReader): unknown =>
  typeof reader === "function" ? reader(payload) : payload[reader]

const defaultScopes = (payload: JWTPayload): unknown => payload.scope ?? payload.scp

type Jose = typeof import("jose")

/** Refuses, when the strategy is made, options that name no key or several, or a PEM without its algorithm. */
const checkKeyOptions = (options: JwtAuthOptions): void => {
  const given = [options.secret, options.publicKey, options.jwksUrl].filter((key) => key !== undefined)
  if (given.length !== 1) throw new TypeError("jwtAuth: give exactly one of secret, publicKey or jwksUrl")
  // An unset environment variable (`JWT_SECRET=""`) would refuse every token, each one counted as a guess.
  if (options.secret !== undefined && options.secret.length === 0) throw new TypeError("jwtAuth: secret is empty")
  if (typeof options.publicKey === "string" && options.algorithms?.[0] === undefined) {
    throw new TypeError("jwtAuth: a PEM publicKey needs `algorithms` to name its algorithm")
  }
}

/** The verification key as jose's key lookup; a PEM is imported once, on first use (import is async). */
const keySource = (jose: Jose, options: JwtAuthOptions): JWTVerifyGetKey => {
  if (options.secret !== undefined) {
    const secret = typeof options.secret === "string" ? new TextEncoder().encode(options.secret) : options.secret
    return () => secret
  }
  if (options.jwksUrl !== undefined) return jose.createRemoteJWKSet(new URL(options.jwksUrl))
  const publicKey = options.publicKey!
  if (typeof publicKey !== "string") return () => publicKey
  let imported: Promise<CryptoKey> | undefined
  return () => (imported ??= jose.importSPKI(publicKey, options.algorithms![0]!))
}

/** What a token lacking a claim is told, for the claims whose absence this strategy refuses. */
const MISSING_CLAIM: Readonly<Record<string, string>> = {
  exp: "The bearer token has no expiry time (exp claim)",
  iat: "The bearer token has no issue time (iat claim), so its age cannot be checked"
}

const describeFailure = (errors: Jose["errors"], error: unknown): string => {
  if (error instanceof errors.JWTExpired) {
    return error.claim === "iat" ? "The bearer token is older than the accepted maximum age" : "The bearer token has expired"
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iat" && error.reason === "check_failed") return "The bearer token's issue time (iat claim) is in the future"
    if (error.reason === "missing") return MISSING_CLAIM[error.claim] ?? `The bearer token has no "${error.claim}" claim`
    return `The bearer token's "${error.claim}" claim is not accepted`
  }
  return "The bearer token is not valid"
}

// The spans jose accepts for `maxTokenAge` and `clockTolerance`, checked here so a typo fails at start-up, not per request.
const SPAN = /^\d+(\.\d+)? ?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|y|yrs?|years?)$/i

const checkSpan = (name: string, value: number | string | undefined): void => {
  if (value === undefined) return
  const valid = typeof value === "number" ? Number.isFinite(value) && value >= 0 : SPAN.test(value)
  if (!valid) throw new TypeError(`jwtAuth: ${name} must be seconds (a number ≥ 0) or a span such as "30s", "15m", "2h", not ${JSON.stringify(value)}`)
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_557_600 }

/** Seconds of a span `checkSpan` accepted: "2 hours" is 7200. Units are told apart by their first letter. */
const spanSeconds = (value: number | string | undefined): number => {
  if (value === undefined) return 0
  if (typeof value === "number") return value
  const [, amount, unit] = /^([\d.]+) ?([a-z])/i.exec(value)!
  return Number(amount) * UNIT_SECONDS[unit!.toLowerCase()]!
}

/**
 * A failure of the key set itself, not of the token: unreachable (a network error, a timeout), an
 * error status or a body that is no JSON (jose's plain `JOSEError`), or no valid key set. A token
 * whose key is not in a good set (`JWKSNoMatchingKey`) is the token's failure.
 */
const keySetFailed = (errors: Jose["errors"], error: unknown): boolean =>
  !(error instanceof errors.JOSEError) ||
  error instanceof errors.JWKSTimeout ||
  error instanceof errors.JWKSInvalid ||
  error.constructor === errors.JOSEError

/** RFC 6750's error_description is a quoted string without `"` or `\`: they become `'` and `/` there. */
const headerText = (text: string): string => text.replace(/"/g, "'").replace(/\\/g, "/")

const rejection = ({ errors }: Jose, error: unknown, usesJwks: boolean): Unauthorized | ServiceUnavailable => {
  // A key set that cannot be fetched is an outage of the identity provider, not a bad token: 503,
  // which authFailureLimit does not count, so callers with good tokens are not locked out meanwhile.
  if (usesJwks && keySetFailed(errors, error)) {
    return new ServiceUnavailable({ message: "The token signing keys could not be fetched" })
  }
  const description = describeFailure(errors, error)
  return new Unauthorized({
    message: description,
    reason: "invalid_credentials",
    headers: { "www-authenticate": `Bearer error="invalid_token", error_description="${headerText(description)}"` }
  })
}

/**
 * Authenticates `Authorization: Bearer <jwt>` with `jose`. No bearer token: no caller (null). A token
 * that fails signature, algorithm, `exp`/`nbf`, issuer, audience or age checks, has an `iat` in the future, or no `exp`
 * (unless `requireExpiry: false`): 401 `invalid_credentials`. Keys are only ever the configured ones:
 * a `jku`, `x5u` or embedded `jwk` header in a token is never followed.
 */
export const jwtAuth = (options: JwtAuthOptions): DocumentedAuthStrategy<JwtAuthContext> => {
  checkKeyOptions(options)
  const clockTolerance = options.clockTolerance ?? options.clockToleranceSeconds
  checkSpan("clockTolerance", clockTolerance)
  checkSpan("maxTokenAge", options.maxTokenAge)
  // jose is loaded when a strategy is made, not when queryserve is imported; a first token waits for it.
  const ready = import("jose").then((jose) => ({ jose, getKey: keySource(jose, options) }))
  // Handled here so that a strategy no token ever reaches reports nothing; requests that await `ready` see the failure.
  ready.catch(() => undefined)
  const usesJwks = options.jwksUrl !== undefined
  const verifyOptions = {
    algorithms: options.algorithms !== undefined
      ? [...options.algorithms]
      : options.secret !== undefined
      ? HMAC_ALGORITHMS
      : undefined,
    issuer: typeof options.issuer === "string" ? options.issuer : options.issuer && [...options.issuer],
    audience: typeof options.audience === "string" ? options.audience : options.audience && [...options.audience],
    clockTolerance,
    maxTokenAge: options.maxTokenAge,
    requiredClaims: options.requireExpiry === false ? [] : ["exp"]
  }
  const rolesClaim = options.claims?.roles ?? "roles"
  const scopesClaim = options.claims?.scopes ?? defaultScopes
  const tenantClaim = options.claims?.tenantId ?? "tenant_id"
  const toleranceSeconds = spanSeconds(clockTolerance)

  /**
   * jose checks a future `iat` only with `maxTokenAge`. A token "issued" later than now is one minted
   * with a skewed or forged clock, which would outlive its intended lifetime: refused in every case.
   */
  const issuedInThePast = (jose: Jose, payload: JWTPayload): JWTPayload => {
    if (typeof payload.iat === "number" && payload.iat > Date.now() / 1000 + toleranceSeconds) {
      throw new jose.errors.JWTClaimValidationFailed('"iat" claim timestamp check failed (it should be in the past)', payload, "iat", "check_failed")
    }
    return payload
  }

  const verify = async (token: string): Promise<JwtAuthContext> => {
    const { jose, getKey } = await ready
    const payload = await jose.jwtVerify(token, getKey, verifyOptions).then(({ payload }) => issuedInThePast(jose, payload)).catch((error: unknown) => {
      throw rejection(jose, error, usesJwks)
    })
    const tenantId = tenantIdOf(read(payload, tenantClaim))
    return {
      subject: payload.sub,
      roles: nameList(read(payload, rolesClaim)),
      scopes: nameList(read(payload, scopesClaim)),
      tenantId: tenantId ?? undefined,
      claims: payload
    }
  }

  const strategy: AuthStrategy<JwtAuthContext> = ({ request }) => {
    const token = BEARER.exec(getHeader(request, "authorization") ?? "")?.[1]
    return token === undefined ? null : verify(token)
  }
  return Object.assign(strategy, { securityScheme: { type: "http", scheme: "bearer", bearerFormat: "JWT" } as const })
}
