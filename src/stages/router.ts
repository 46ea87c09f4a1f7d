import type { HttpMethod } from "../domain/http.js"

/**
 * Exact lookup by method, then path; HEAD falls back to GET. Also knows which methods a path
 * has, so a known path asked with another method answers 405 with `Allow`.
 */
export class Router<A> {
  /** method → path → value: two lookups, no `METHOD path` string built per request. */
  private readonly byMethod = new Map<string, Map<string, A>>()
  private readonly methodsByPath = new Map<string, Array<HttpMethod>>()

  add(method: HttpMethod, path: string, value: A): void {
    let byPath = this.byMethod.get(method)
    if (byPath === undefined) this.byMethod.set(method, (byPath = new Map()))
    if (byPath.has(path)) throw new Error(`Duplicate route ${method} ${path}`)
    byPath.set(path, value)
    const methods = this.methodsByPath.get(path)
    if (methods === undefined) this.methodsByPath.set(path, [method])
    else methods.push(method)
  }

  find(method: string, path: string): A | undefined {
    const found = this.byMethod.get(method)?.get(path)
    if (found !== undefined || method !== "HEAD") return found
    return this.byMethod.get("GET")?.get(path)
  }

  /** Methods served on `path` (with HEAD where GET is), or undefined for an unknown path. */
  allowed(path: string): ReadonlyArray<string> | undefined {
    const methods = this.methodsByPath.get(path)
    if (methods === undefined) return undefined
    return methods.includes("GET") && !methods.includes("HEAD") ? [...methods, "HEAD"] : methods
  }
}

/** Strips one trailing slash so `/x/` and `/x` are the same route. */
export const normalizePath = (path: string): string =>
  path.length > 1 && path.charCodeAt(path.length - 1) === 47 ? path.slice(0, -1) : path

const SINGLE_DOT = /^(?:\.|%2e)$/i
const DOUBLE_DOT = /^(?:\.|%2e){2}$/i

/**
 * The path with its dot segments (`.`, `..`, also percent-encoded) resolved and backslashes read as
 * slashes, as a URL parser does for http(s); undefined when there is nothing to resolve. Fetch
 * runtimes hand over paths resolved this way; node:http hands over the raw target, so a route that
 * misses is looked up once more by this path, and both adapters answer such a request alike.
 */
const resolveDotSegments = (path: string): string | undefined => {
  const slashed = path.includes("\\") ? path.replaceAll("\\", "/") : path
  if (slashed === path && !path.includes("/.") && !/\/%2e/i.test(path)) return undefined
  const resolved: Array<string> = []
  const segments = slashed.split("/")
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!
    const last = i === segments.length - 1
    if (SINGLE_DOT.test(segment)) {
      if (last) resolved.push("")
    } else if (DOUBLE_DOT.test(segment)) {
      resolved.pop()
      if (last) resolved.push("")
    } else {
      resolved.push(segment)
    }
  }
  return `/${resolved.join("/")}`
}

/** The path with its percent-encoded characters decoded; undefined when none are, or the encoding is broken. */
const decodePercents = (path: string): string | undefined => {
  if (!path.includes("%")) return undefined
  try {
    return decodeURIComponent(path)
  } catch {
    return undefined
  }
}

/**
 * Another spelling of a path that missed: dot segments resolved (see `resolveDotSegments`), then
 * percent-encoding decoded, as a key with spaces or other than ASCII letters is registered as written
 * and sent encoded (`/api/analytics/revenue%20by%20region`); undefined when there is none.
 */
export const respelledPath = (path: string): string | undefined => {
  const resolved = resolveDotSegments(path) ?? path
  const decoded = decodePercents(resolved) ?? resolved
  return decoded === path ? undefined : normalizePath(decoded)
}
