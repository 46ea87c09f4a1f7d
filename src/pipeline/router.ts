import type { HttpMethod } from "../domain/http.js"

/**
 * Exact `METHOD path` lookup in a Map; HEAD falls back to GET. Also knows which methods a path
 * has, so a known path asked with another method answers 405 with `Allow`.
 */
export class Router<A> {
  private readonly byRoute = new Map<string, A>()
  private readonly methodsByPath = new Map<string, Array<HttpMethod>>()

  add(method: HttpMethod, path: string, value: A): void {
    const key = `${method} ${path}`
    if (this.byRoute.has(key)) throw new Error(`Duplicate route ${key}`)
    this.byRoute.set(key, value)
    const methods = this.methodsByPath.get(path)
    if (methods === undefined) this.methodsByPath.set(path, [method])
    else methods.push(method)
  }

  find(method: string, path: string): A | undefined {
    const found = this.byRoute.get(`${method} ${path}`)
    if (found !== undefined || method !== "HEAD") return found
    return this.byRoute.get(`GET ${path}`)
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
