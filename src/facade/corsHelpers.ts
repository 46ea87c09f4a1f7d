import { getHeader, type ServeRequest, type ServeResponse } from "../domain/http.js"
import { compileCors, type CorsOptions, type CorsPlan } from "../stages/cors.js"

/**
 * @hypequery/serve's CORS helpers, for code that sets CORS headers on answers of its own. The
 * origin checks are those of queryserve's `cors` option (the same origins allowed, the same
 * mistakes refused); the headers are hypequery's: only the exposed headers listed, nothing for an
 * origin that is refused, and defaults for methods, allowed headers and max-age filled in.
 */
export interface ResolvedCorsConfig {
  readonly origin: string | ReadonlyArray<string> | ((origin: string) => boolean)
  readonly methods: ReadonlyArray<string>
  readonly allowedHeaders: ReadonlyArray<string>
  readonly exposedHeaders: ReadonlyArray<string>
  readonly credentials: boolean
  readonly maxAge: number
}

const DEFAULTS = {
  methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
  allowedHeaders: ["Content-Type", "Authorization", "X-Request-ID"],
  maxAge: 86_400
} as const

/** Each config's origin matcher, compiled once (a config built by hand is compiled on first use). */
const plans = new WeakMap<ResolvedCorsConfig, CorsPlan>()

const planOf = (config: ResolvedCorsConfig): CorsPlan | undefined => {
  const known = plans.get(config)
  if (known !== undefined) return known
  const plan = compileCors(config)
  if (plan !== undefined) plans.set(config, plan)
  return plan
}

/**
 * `false` or nothing: no CORS (null). `true` or options: the options over the defaults, checked as
 * the `cors` option is (it throws for `credentials: true` without an origin list, and for an
 * origin a browser never sends).
 */
export const resolveCorsConfig = (config: boolean | CorsOptions | undefined): ResolvedCorsConfig | null => {
  if (config === undefined || config === false) return null
  const options: CorsOptions = config === true ? {} : config
  const plan = compileCors(options)
  const resolved: ResolvedCorsConfig = {
    origin: options.origin ?? "*",
    methods: options.methods ?? DEFAULTS.methods,
    allowedHeaders: options.allowedHeaders ?? DEFAULTS.allowedHeaders,
    exposedHeaders: options.exposedHeaders ?? [],
    credentials: options.credentials ?? false,
    maxAge: options.maxAge ?? DEFAULTS.maxAge
  }
  if (plan !== undefined) plans.set(resolved, plan)
  return resolved
}

/** The headers of an ordinary answer to `requestOrigin`: none when it sent no origin or is refused. */
export const buildCorsHeaders = (config: ResolvedCorsConfig, requestOrigin: string | undefined): Record<string, string> => {
  if (requestOrigin === undefined) return {}
  const allowed = planOf(config)?.headersFor(requestOrigin)["access-control-allow-origin"]
  if (allowed === undefined) return {}
  const headers: Record<string, string> = { "access-control-allow-origin": allowed }
  // A reflected origin makes the answer depend on it.
  if (allowed !== "*") headers.vary = "Origin"
  if (config.credentials) headers["access-control-allow-credentials"] = "true"
  if (config.exposedHeaders.length > 0) headers["access-control-expose-headers"] = config.exposedHeaders.join(", ")
  return headers
}

/** The headers of a preflight answer: those of an ordinary one plus methods, headers and max-age, or none. */
export const buildPreflightHeaders = (config: ResolvedCorsConfig, requestOrigin: string | undefined): Record<string, string> => {
  const headers = buildCorsHeaders(config, requestOrigin)
  if (headers["access-control-allow-origin"] === undefined) return headers
  headers["access-control-allow-methods"] = config.methods.join(", ")
  headers["access-control-allow-headers"] = config.allowedHeaders.join(", ")
  headers["access-control-max-age"] = String(config.maxAge)
  return headers
}

/** An OPTIONS request gets a 204 preflight answer; any other the headers to add to its answer. */
export const handleCorsRequest = (
  config: ResolvedCorsConfig | null,
  request: Pick<ServeRequest, "method" | "headers">
): { readonly preflightResponse: ServeResponse | null; readonly corsHeaders: Record<string, string> } => {
  if (config === null) return { preflightResponse: null, corsHeaders: {} }
  const origin = getHeader(request, "origin")
  if (request.method.toUpperCase() === "OPTIONS") {
    return { preflightResponse: { status: 204, headers: buildPreflightHeaders(config, origin), body: "" }, corsHeaders: {} }
  }
  return { preflightResponse: null, corsHeaders: buildCorsHeaders(config, origin) }
}
