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
