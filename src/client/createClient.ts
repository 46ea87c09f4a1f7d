import type { ServeQueriesMap } from "../domain/config.js"
import type { HttpMethod } from "../domain/http.js"
import type { QueryInput, QueryOutput } from "../facade/types.js"
import { parseErrorEnvelope, ServeClientError } from "./ServeClientError.js"

type HeadersSource = HeadersInit | (() => HeadersInit | Promise<HeadersInit>)

export interface ClientOptions<TQueries> {
  /** The API's base URL: origin and basePath, e.g. `http://localhost:4000/api/analytics`. */
  readonly baseUrl: string
  /** Default: the global `fetch`. */
  readonly fetch?: typeof globalThis.fetch
  /** Headers for every call (API keys, tokens); a function is asked again for each call. */
  readonly headers?: HeadersSource
  /**
   * The HTTP method of queries that are not GET. Those not listed are looked up once, on the first
   * call, in the API's OpenAPI document at `baseUrl + openapiPath`.
   */
  readonly methods?: { readonly [K in keyof TQueries]?: HttpMethod }
  /** Default "/openapi.json", the server's default `openapi.path`. */
  readonly openapiPath?: string
}

export interface CallOptions {
  readonly headers?: HeadersInit
  readonly signal?: AbortSignal
}

/** One query as a function: the input is optional when the query needs none. */
export type ClientCall<I, O> = {} extends I ? (input?: I, options?: CallOptions) => Promise<O>
  : (input: I, options?: CallOptions) => Promise<O>

/** A client whose members are the API's queries, typed by their definitions. */
export type ServeClient<TQueries> = {
  readonly [K in keyof TQueries & string]: ClientCall<QueryInput<TQueries[K]>, QueryOutput<TQueries[K]>>
}

type QueriesOf<TApi> = TApi extends { readonly queries: infer Q } ? Q : never

const QUERY_STRING_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "DELETE"])

const paramText = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)

/** `{ a: 1, ids: [1, 2] }` → `?a=1&ids=1&ids=2`: lists repeat their key, as the server reads them. */
const queryString = (input: unknown): string => {
  if (input === undefined || input === null) return ""
  if (typeof input !== "object" || Array.isArray(input)) throw new TypeError("The input of a GET, HEAD or DELETE query must be an object")
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, paramText(item))
  }
  const text = params.toString()
  return text.length === 0 ? "" : `?${text}`
}

interface OpenApiPaths {
  readonly paths?: Readonly<Record<string, Readonly<Record<string, { readonly operationId?: unknown }>>>>
}

/**
 * A typed client for an API defined with `defineServe`: `createClient<typeof api>({ baseUrl })`, then
 * `await client.revenue({ from: "2024-01-01" })`. GET, HEAD and DELETE queries send their input as a
 * query string, the others as a JSON body; an error response throws a `ServeClientError`. A query
 * named `then` cannot be called this way: the client is not a promise.
 */
export const createClient = <TApi extends { readonly queries: ServeQueriesMap }>(
  options: ClientOptions<QueriesOf<TApi>>
): ServeClient<QueriesOf<TApi>> => {
  const fetchImpl = options.fetch ?? globalThis.fetch
  const baseUrl = options.baseUrl.replace(/\/+$/, "")
  const listed = (options.methods ?? {}) as Readonly<Record<string, HttpMethod | undefined>>
  const documentUrl = baseUrl + (options.openapiPath ?? "/openapi.json")
  let documented: Promise<ReadonlyMap<string, HttpMethod>> | undefined

  const baseHeaders = (): HeadersInit | Promise<HeadersInit> =>
    typeof options.headers === "function" ? options.headers() : options.headers ?? {}

  const readDocument = async (): Promise<ReadonlyMap<string, HttpMethod>> => {
    const response = await fetchImpl(documentUrl, { headers: await baseHeaders() })
    const text = await response.text()
    if (!response.ok) throw new ServeClientError(response.status, parseErrorEnvelope(text), response.headers.get("x-request-id") ?? undefined)
    const methods = new Map<string, HttpMethod>()
    for (const pathItem of Object.values((JSON.parse(text) as OpenApiPaths).paths ?? {})) {
      for (const [method, operation] of Object.entries(pathItem)) {
        if (typeof operation.operationId === "string") methods.set(operation.operationId, method.toUpperCase() as HttpMethod)
      }
    }
    return methods
  }

  const methodOf = async (key: string): Promise<HttpMethod> => {
    const method = listed[key]
    if (method !== undefined) return method
    // A failed lookup is not kept: the next call tries again.
    documented ??= readDocument().catch((error: unknown) => {
      documented = undefined
      throw error
    })
    const found = (await documented).get(key)
    if (found === undefined) throw new Error(`createClient: "${key}" is not an operation of ${documentUrl}`)
    return found
  }

  const call = async (key: string, input: unknown, callOptions: CallOptions = {}): Promise<unknown> => {
    const method = await methodOf(key)
    const headers = new Headers(await baseHeaders())
    new Headers(callOptions.headers).forEach((value, name) => headers.set(name, value))
    const inQueryString = QUERY_STRING_METHODS.has(method)
    if (!inQueryString && input !== undefined) headers.set("content-type", "application/json")
    const path = key.split("/").map(encodeURIComponent).join("/")
    const response = await fetchImpl(`${baseUrl}/${path}${inQueryString ? queryString(input) : ""}`, {
      method,
      headers,
      body: inQueryString || input === undefined ? undefined : JSON.stringify(input),
      signal: callOptions.signal
    })
    const text = await response.text()
    if (!response.ok) throw new ServeClientError(response.status, parseErrorEnvelope(text), response.headers.get("x-request-id") ?? undefined)
    return text.length === 0 ? undefined : JSON.parse(text)
  }

  const callers = new Map<string, (input?: unknown, callOptions?: CallOptions) => Promise<unknown>>()
  return new Proxy({}, {
    get: (_target, property) => {
      if (typeof property !== "string" || property === "then") return undefined
      let caller = callers.get(property)
      if (caller === undefined) callers.set(property, (caller = (input, callOptions) => call(property, input, callOptions)))
      return caller
    }
  }) as ServeClient<QueriesOf<TApi>>
}
