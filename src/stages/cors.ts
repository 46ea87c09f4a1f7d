
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

/** What a browser sends as `Origin` for `text`, or undefined when `text` is no origin at all. */
const serializedOrigin = (text: string): string | undefined => {
  try {
    const origin = new URL(text).origin
    return origin === "null" ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Throws, saying what to change, for an `origin` that could never match: browsers send an origin as
 * `scheme://host[:port]`, lower case, without a path or a trailing slash, so
 * `"https://app.example.com/"` would refuse the very site it names.
 */
const checkOrigins = (origin: CorsOptions["origin"]): void => {
  if (origin === undefined || typeof origin === "function") return
  if (typeof origin !== "string" && !Array.isArray(origin)) {
    throw new Error(
      "defineServe: cors.origin takes \"*\", an origin, a list of origins or a function; for a pattern, " +
        "give a function such as (origin) => /^https:\\/\\/[a-z]+\\.example\\.com$/.test(origin)."
    )
  }
  const origins: ReadonlyArray<unknown> = typeof origin === "string" ? [origin] : origin
  if (origins.length === 0) throw new Error("defineServe: cors.origin lists no origin; list the sites that may call, or leave cors out.")
  for (const candidate of origins) {
    if (candidate === "*") continue
    const sent = typeof candidate === "string" ? serializedOrigin(candidate) : undefined
    if (sent === candidate) continue
    throw new Error(
      `defineServe: cors.origin ${JSON.stringify(candidate)} would never match: a browser sends an origin as ` +
        (sent === undefined ? `scheme://host[:port], such as "https://app.example.com".` : `${JSON.stringify(sent)}; write it so.`)
    )
  }
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
  checkOrigins(options.origin)
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

export interface CorsOptions {
  /**
   * Allowed origins: `"*"` (default), one origin, a list, or a predicate that returns `true`
   * (synchronously) for the origins it allows; one that throws refuses that origin.
   */
  readonly origin?: string | ReadonlyArray<string> | ((origin: string) => boolean)
  readonly methods?: ReadonlyArray<string>
  readonly allowedHeaders?: ReadonlyArray<string>
  readonly exposedHeaders?: ReadonlyArray<string>
  /**
   * Let browsers send cookies and read the answers. Needs an explicit `origin` (not `"*"`):
   * `defineServe` throws otherwise, since a credentialed wildcard lets any site read the answers.
   */
  readonly credentials?: boolean
  readonly maxAge?: number
}
