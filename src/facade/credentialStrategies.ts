import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import { getHeader, type ServeRequest } from "../domain/http.js"
import { andThen, type MaybePromise } from "../domain/maybePromise.js"
import type { DocumentedAuthStrategy, SecurityScheme } from "../openapi/securityScheme.js"

/** Resolves the caller a credential stands for; null (or undefined) when it stands for none. */
type Validate<TAuth> = (credential: string, request: ServeRequest) => MaybePromise<TAuth | null | undefined>

export interface ApiKeyStrategyOptions<TAuth extends ServeAuthContext> {
  /** Header that carries the key, read case-insensitively. Default `authorization`, where a `Bearer ` prefix is dropped. */
  readonly header?: string
  /** A query parameter read before the header; used when it holds exactly one value. */
  readonly queryParam?: string
  readonly validate: Validate<TAuth>
}

export interface BearerTokenStrategyOptions<TAuth extends ServeAuthContext> {
  /** Default `authorization`. */
  readonly header?: string
  /** What the header's value must start with; the rest, trimmed, is the token. Default `"Bearer "`. */
  readonly prefix?: string
  readonly validate: Validate<TAuth>
}

const DEFAULT_HEADER = "authorization"
const BEARER_PREFIX = /^Bearer\s+/i

/** Whatever `validate` answers that is no caller is none: the strategy finds no caller, and a protected endpoint answers 401. */
const callerOrNone = <TAuth>(caller: TAuth | null | undefined): TAuth | null => caller ?? null

const documented = <TAuth extends ServeAuthContext>(strategy: AuthStrategy<TAuth>, securityScheme: SecurityScheme): DocumentedAuthStrategy<TAuth> =>
  Object.assign(strategy, { securityScheme })

/**
 * @hypequery/serve's `createApiKeyStrategy`: the key is `queryParam`'s value when it holds one, else
 * the header's (without a `Bearer ` prefix). No key: no caller, and `validate` is not called. Unlike
 * `apiKeyAuth`, a key `validate` rejects is no caller either (401 `missing_credentials`), as there.
 */
export const createApiKeyStrategy = <TAuth extends ServeAuthContext>(options: ApiKeyStrategyOptions<TAuth>): DocumentedAuthStrategy<TAuth> => {
  const header = options.header ?? DEFAULT_HEADER
  const queryParam = options.queryParam
  const strategy: AuthStrategy<TAuth> = ({ request }) => {
    const fromQuery = queryParam === undefined ? undefined : request.query?.[queryParam]
    const key = typeof fromQuery === "string" ? fromQuery : getHeader(request, header)?.replace(BEARER_PREFIX, "")
    if (key === undefined || key === "") return null
    return andThen(options.validate(key, request), callerOrNone)
  }
  return documented(strategy, queryParam === undefined
    ? { type: "apiKey", in: "header", name: header }
    : { type: "apiKey", in: "query", name: queryParam })
}

/**
 * @hypequery/serve's `createBearerTokenStrategy`: the header must start with `prefix`; the rest,
 * trimmed, is the token. No header, another prefix or an empty token: no caller, and `validate` is
 * not called.
 */
export const createBearerTokenStrategy = <TAuth extends ServeAuthContext>(options: BearerTokenStrategyOptions<TAuth>): DocumentedAuthStrategy<TAuth> => {
  const header = options.header ?? DEFAULT_HEADER
  const prefix = options.prefix ?? "Bearer "
  const strategy: AuthStrategy<TAuth> = ({ request }) => {
    const value = getHeader(request, header)
    if (value === undefined || !value.startsWith(prefix)) return null
    const token = value.slice(prefix.length).trim()
    if (token === "") return null
    return andThen(options.validate(token, request), callerOrNone)
  }
  return documented(strategy, header === DEFAULT_HEADER && prefix.trim().toLowerCase() === "bearer"
    ? { type: "http", scheme: "bearer" }
    : { type: "apiKey", in: "header", name: header })
}
