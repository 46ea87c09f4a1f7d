import type { CorsOptions } from "../domain/config.js"

const DEFAULT_METHODS = "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS"
const DEFAULT_EXPOSED = "x-request-id,x-ratelimit-limit,x-ratelimit-remaining,x-ratelimit-reset,retry-after,etag"

export interface CorsPlan {
  /** Headers for an ordinary response; only `Vary` when the origin is not allowed (or unknown). */
  headersFor(origin: string | undefined): Readonly<Record<string, string>>
  /** Headers for a preflight answer; only `Vary` when the origin is not allowed. */
  preflightFor(origin: string | undefined, requestedHeaders: string | undefined): Readonly<Record<string, string>>
  /** Whether pages of `origin` may read answers. */
  allows(origin: string): boolean
}

/** undefined: every origin is allowed (no `origin`, or `*` alone or in a list). */
/**
 * The application's predicate, failing closed: it sees whatever a client puts in `Origin` (`null`,
 * text that is no URL), and a throw there must refuse that origin, not end the request or the
 * process. Only `true` allows: a promise (an async predicate) would otherwise allow every origin.
 */
const refusingOnThrow = (allows: (origin: string) => boolean): ((origin: string) => boolean) => {
  let reported = false
  return (candidate) => {
    try {
      return allows(candidate) === true
    } catch (error) {
      if (!reported) console.error("[queryserve] cors.origin threw; such origins are refused (logged once)", error)
      reported = true
      return false
    }
  }
}

const originMatcher = (origin: CorsOptions["origin"]): ((origin: string) => boolean) | undefined => {
  if (origin === undefined || origin === "*" || (Array.isArray(origin) && origin.includes("*"))) return undefined
  if (typeof origin === "string") return (candidate) => candidate === origin
  if (typeof origin === "function") return refusingOnThrow(origin)
  const allowed = new Set(origin)
  return (candidate) => allowed.has(candidate)
}

/** A credentialed wildcard would let any site read answers sent with the user's cookies: refused at define time. */
const checkCredentials = (options: CorsOptions): void => {
  if (options.credentials !== true) return
  const origin = options.origin
  const wildcard = origin === undefined || origin === "*" || (Array.isArray(origin) && origin.includes("*"))
  if (!wildcard) return
  throw new Error(
    `defineServe: cors has credentials: true ${origin === undefined ? "and no origin" : `with origin ${JSON.stringify(origin)}`}, ` +
      `which would let any site read answers sent with a user's cookies. Set cors.origin to the sites that may call ` +
      `(a string such as "https://app.example.com", a list, or a function), or remove credentials: true.`
  )
}

export const compileCors = (option: true | CorsOptions | undefined): CorsPlan | undefined => {
  if (option === undefined) return undefined
  const options: CorsOptions = option === true ? {} : option
  checkCredentials(options)
  const matches = originMatcher(options.origin)
  const credentials = options.credentials === true
  const exposed = [DEFAULT_EXPOSED, ...(options.exposedHeaders ?? [])].join(",")
  const methods = options.methods?.join(",") ?? DEFAULT_METHODS
  const allowedHeaders = options.allowedHeaders?.join(",")
  // `*` when every origin is allowed (never with credentials, see checkCredentials); otherwise the origin is
  // reflected, and every answer says it varies by Origin so a shared cache never hands one origin's answer to another.
  const wildcard = matches === undefined
  const wildcardHeaders: Readonly<Record<string, string>> = {
    "access-control-allow-origin": "*",
    "access-control-expose-headers": exposed
  }
  const varyOnly: Readonly<Record<string, string>> = { vary: "Origin" }

  const allowedOrigin = (origin: string | undefined): origin is string =>
    origin !== undefined && (matches === undefined || matches(origin))

  const headersFor = (origin: string | undefined): Readonly<Record<string, string>> => {
    if (wildcard) return wildcardHeaders
    if (!allowedOrigin(origin)) return varyOnly
    const headers: Record<string, string> = {
      "access-control-allow-origin": origin,
      "access-control-expose-headers": exposed,
      vary: "Origin"
    }
    if (credentials) headers["access-control-allow-credentials"] = "true"
    return headers
  }

  return {
    headersFor,
    allows: allowedOrigin,
    preflightFor: (origin, requestedHeaders) => {
      // A refused preflight says it varies by Origin too: a shared cache must not hand it to an allowed origin.
      if (!wildcard && !allowedOrigin(origin)) return varyOnly
      const headers: Record<string, string> = { ...headersFor(origin), "access-control-allow-methods": methods }
      if (allowedHeaders !== undefined) headers["access-control-allow-headers"] = allowedHeaders
      else if (requestedHeaders !== undefined) {
        // Echoing the requested headers makes the answer depend on them too.
        headers["access-control-allow-headers"] = requestedHeaders
        headers.vary = wildcard ? "Access-Control-Request-Headers" : "Origin, Access-Control-Request-Headers"
      }
      if (options.maxAge !== undefined) headers["access-control-max-age"] = String(options.maxAge)
      return headers
    }
  }
}
