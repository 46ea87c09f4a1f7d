import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import { Unauthorized } from "../domain/errors.js"
import { getHeader, type ServeRequest } from "../domain/http.js"
import type { DocumentedAuthStrategy } from "../openapi/securityScheme.js"
import { type MaybePromise, andThen } from "../domain/maybePromise.js"

interface ApiKeyHeader {
  /** Header that carries the key. Default `x-api-key`; read case-insensitively. */
  readonly header?: string
  /**
   * Accepted for code written for @hypequery/serve, where it stops a missing key from being an
   * error. Here a missing key never is one, whatever this says: the strategy finds no caller (null),
   * so a protected endpoint answers 401 `missing_credentials` and a public one runs.
   */
  readonly allowMissing?: boolean
}

export type ApiKeyAuthOptions<TAuth extends ServeAuthContext> = ApiKeyHeader & (
  | {
    /** Resolves the caller of a key (for example its tenant); null for an unknown key. */
    readonly validate: (key: string, request: ServeRequest) => MaybePromise<TAuth | null | undefined>
  }
  | {
    /** A fixed table of key → caller; keys are compared in constant time. */
    readonly keys: Readonly<Record<string, TAuth>>
  }
)

const DEFAULT_HEADER = "x-api-key"

/**
 * Whether `presented` is `secret`, in a time that depends on the length of `presented` and nothing
 * else: every one of its characters is compared (against the secret's, cycled), the differences and
 * the difference of the lengths are OR-ed together, and the loop never exits early.
 */
const sameKey = (secret: string, presented: string): boolean => {
  let difference = secret.length ^ presented.length
  const length = secret.length
  for (let i = 0; i < presented.length; i++) difference |= presented.charCodeAt(i) ^ (secret.charCodeAt(i % length) | 0)
  return difference === 0
}

/**
 * Looks a presented key up in a fixed table without leaking, through timing, how much of it matched:
 * every entry is compared in constant time and the loop never exits early. No hashing (a SHA-256 of
 * the key cost more than the rest of the lookup), synchronous on every runtime.
 */
const constantTimeTable = <TAuth>(keys: Readonly<Record<string, TAuth>>) => {
  const entries = Object.entries(keys).map(([key, caller]) => ({ key, caller }))
  return (key: string): TAuth | null => {
    let found: TAuth | null = null
    for (const entry of entries) {
      if (sameKey(entry.key, key)) found = entry.caller
    }
    return found
  }
}

const invalidKey = (header: string) =>
  new Unauthorized({ message: `The API key in the ${header} header is not valid`, reason: "invalid_credentials" })

/**
 * Authenticates callers by an API key header. No header: the strategy has no caller (null), so a
 * protected endpoint answers 401 `missing_credentials`. A key that resolves to no caller: 401
 * `invalid_credentials`.
 */
export const apiKeyAuth = <TAuth extends ServeAuthContext>(
  options: ApiKeyAuthOptions<TAuth>
): DocumentedAuthStrategy<TAuth> => {
  const header = options.header ?? DEFAULT_HEADER
  const resolve = "keys" in options ? constantTimeTable(options.keys) : options.validate
  // Made once per strategy, not per request.
  // Only an object is a caller: a `validate` written as `key === secret && { ... }` answers `false`.
  const knownCaller = (caller: TAuth | null | undefined): TAuth => {
    if (typeof caller !== "object" || caller === null) throw invalidKey(header)
    return caller
  }
  const strategy: AuthStrategy<TAuth> = ({ request }) => {
    const key = getHeader(request, header)
    if (key === undefined || key.length === 0) return null
    return andThen(resolve(key, request), knownCaller)
  }
  return Object.assign(strategy, { securityScheme: { type: "apiKey", in: "header", name: header } as const })
}
