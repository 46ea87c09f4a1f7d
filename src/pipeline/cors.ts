import type { CorsOptions } from "../domain/config.js"

const DEFAULT_METHODS = "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS"
const DEFAULT_EXPOSED = "x-request-id,x-ratelimit-limit,x-ratelimit-remaining,x-ratelimit-reset,retry-after,etag"

export interface CorsPlan {
  /** Headers for an ordinary response, or undefined when the origin is not allowed. */
  headersFor(origin: string | undefined): Record<string, string> | undefined
  /** Headers for a preflight answer, or undefined when the origin is not allowed. */
  preflightFor(origin: string | undefined, requestedHeaders: string | undefined): Record<string, string> | undefined
}

const originMatcher = (origin: CorsOptions["origin"]): ((origin: string) => boolean) => {
  if (origin === undefined) return () => true
  if (typeof origin === "string") return (candidate) => candidate === origin
  if (typeof origin === "function") return origin
  const allowed = new Set(origin)
  return (candidate) => allowed.has(candidate)
}

export const compileCors = (option: true | CorsOptions | undefined): CorsPlan | undefined => {
  if (option === undefined) return undefined
  const options: CorsOptions = option === true ? {} : option
  const matches = originMatcher(options.origin)
  // `*` only when every origin is allowed and no credentials are sent; otherwise reflect the origin.
  const wildcard = options.origin === undefined && options.credentials !== true
  const exposed = [DEFAULT_EXPOSED, ...(options.exposedHeaders ?? [])].join(",")
  const methods = options.methods?.join(",") ?? DEFAULT_METHODS
  const allowedHeaders = options.allowedHeaders?.join(",")

  const headersFor = (origin: string | undefined): Record<string, string> | undefined => {
    if (wildcard) return { "access-control-allow-origin": "*", "access-control-expose-headers": exposed }
    if (origin === undefined || !matches(origin)) return undefined
    const headers: Record<string, string> = {
      "access-control-allow-origin": origin,
      "access-control-expose-headers": exposed,
      vary: "Origin"
    }
    if (options.credentials === true) headers["access-control-allow-credentials"] = "true"
    return headers
  }

  return {
    headersFor,
    preflightFor: (origin, requestedHeaders) => {
      const base = headersFor(origin)
      if (base === undefined) return undefined
      const headers: Record<string, string> = { ...base, "access-control-allow-methods": methods }
      const allowHeaders = allowedHeaders ?? requestedHeaders
      if (allowHeaders !== undefined) headers["access-control-allow-headers"] = allowHeaders
      if (options.maxAge !== undefined) headers["access-control-max-age"] = String(options.maxAge)
      return headers
    }
  }
}
