import type { ServeQueriesMap } from "../domain/config.js"
import { joinPath } from "../domain/paths.js"
import type { HttpMethod } from "../domain/http.js"
import type { QueryInput, QueryOutput, TakesNothing } from "../facade/types.js"
import type { DatasetQuery as DatasetQueryOf, DatasetResult } from "../datasets/query.js"
import type { DatasetAnswer, DatasetQuery } from "./DatasetQuery.js"
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
   * call, in the API's OpenAPI document at `baseUrl` + `openapiPath`; when that answers 404, they are GET.
   */
  readonly methods?: { readonly [K in keyof TQueries]?: HttpMethod }
  /** The server's `openapi.path`, joined to `baseUrl` with one slash as the server joins it. Default "/openapi.json". */
  readonly openapiPath?: string
}

export interface CallOptions {
  readonly headers?: HeadersInit
  readonly signal?: AbortSignal
}

/** One query as a function: the input is optional when the query needs none. */
export type ClientCall<I, O> = TakesNothing<I> extends true ? (input?: I, options?: CallOptions) => Promise<O>
  : (input: I, options?: CallOptions) => Promise<O>

/** A client whose members are the API's queries, typed by their definitions. */
export type ServeClient<TQueries> = {
  readonly [K in keyof TQueries & string]: ClientCall<QueryInput<TQueries[K]>, QueryOutput<TQueries[K]>>
}

/** The queries of an API defined with `defineServe`, from its type. */
export type QueriesOf<TApi> = TApi extends { readonly queries: infer Q } ? Q : never

const QUERY_STRING_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "DELETE"])

const unsendable = (name: string, what: string, remedy: string): TypeError =>
  new TypeError(`createClient: input field "${name}" ${what}, which a query string cannot carry; ${remedy}`)

const kindOf = (value: unknown): string =>
  typeof value === "number" ? String(value)
  : value instanceof Date ? "an invalid Date"
  : Array.isArray(value) ? "a list inside a list"
  : typeof value === "object" ? "an object"
  : `a ${typeof value}`

/**
 * One value as text the server's query-string coercion reads back as it was: a text, a finite number,
 * a boolean, a Date (ISO text). Anything else would arrive changed, so it is refused, not sent.
 * The text alone cannot say which it was: a field that also takes any text keeps `5` as "5" and a
 * one-item list as its item. Only the schema knows that, and the client has none at run time.
 */
const paramText = (name: string, value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) return String(value)
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
  // The text "null" stays a text wherever the field also accepts texts (a nullable string or Date).
  if (value === null) throw unsendable(name, "is null", "leave the field out, or send null with a POST query")
  throw unsendable(name, `is ${kindOf(value)}`, "send structured input with a POST query (its input is a JSON body)")
}

/** `{ a: 1, ids: [1, 2] }` → `?a=1&ids=1&ids=2`: lists repeat their key, as the server reads them. */
const queryString = (input: unknown): string => {
  if (input === undefined || input === null) return ""
  if (typeof input !== "object" || Array.isArray(input)) throw new TypeError("The input of a GET, HEAD or DELETE query must be an object")
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue
    const items: ReadonlyArray<unknown> = Array.isArray(value) ? value : [value]
    // An empty list would send no key at all: the server would see the field missing.
    if (items.length === 0) throw unsendable(name, "is an empty list", "leave the field out, or send [] with a POST query")
    for (const item of items) params.append(name, paramText(name, item))
  }
  const text = params.toString()
  return text.length === 0 ? "" : `?${text}`
}

/**
 * `fetch`, whose failure to get any response (connection refused or reset, no such host) is a
 * ServeClientError with status 0 saying what was asked for. An abort stays the signal's reason.
 */
const reach = async (fetchImpl: typeof globalThis.fetch, url: string, init: RequestInit, asked: string): Promise<Response> => {
  try {
    return await fetchImpl(url, init)
  } catch (error) {
    if (init.signal?.aborted === true) throw error
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ""
    const reason = error instanceof Error ? error.message + cause : String(error)
    throw new ServeClientError(0, undefined, undefined, `${asked} got no response: ${reason}`, { cause: error })
  }
}

const requestIdOf = (response: Response): string | undefined => response.headers.get("x-request-id") ?? undefined

/** A query's path under `baseUrl`: its key joined as the server joins it to `basePath`, each segment percent-encoded. */
const queryPath = (key: string): string => joinPath(key).split("/").map(encodeURIComponent).join("/")

/**
 * The error a call rejects with. A 304 comes only to a call that sent its own If-None-Match; the
 * promise has no value to resolve to, so it rejects, saying that the caller's copy is current.
 */
const failureOf = (response: Response, text: string): ServeClientError =>
  response.status === 304
    ? new ServeClientError(304, undefined, requestIdOf(response), "Not Modified (HTTP 304): the copy If-None-Match names is current")
    : new ServeClientError(response.status, parseErrorEnvelope(text), requestIdOf(response))

/**
 * A 2xx body as JSON. One that is not (a proxy's login page, or a redirect fetch followed to one) is
 * a ServeClientError saying what `answer` was and what came instead.
 */
const parseAnswer = (response: Response, text: string, answer: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    const contentType = response.headers.get("content-type") ?? "no content-type"
    const redirected = response.redirected ? `, after a redirect to ${response.url}` : ""
    const message = `${answer} (HTTP ${response.status}) is not JSON: ${contentType}${redirected}`
    throw new ServeClientError(response.status, undefined, requestIdOf(response), message)
  }
}

/** `promise`, or the signal's reason once it aborts. The promise itself goes on: other calls may share it. */
const untilAborted = <A>(promise: Promise<A>, signal: AbortSignal | undefined): Promise<A> => {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<A>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener("abort", abort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort))
  })
}

/** The request path shared by `createClient` and the React hooks: one fetch, parse and error path. */
interface ClientTransport {
  /** A query by key, with its method from `methods` or the OpenAPI document. */
  readonly call: (key: string, input: unknown, options?: CallOptions) => Promise<unknown>
  /** `POST {baseUrl}/datasets/{name}` with the query as its JSON body. */
  readonly queryDataset: (name: string, query: DatasetQuery, options?: CallOptions) => Promise<DatasetAnswer>
}

interface OpenApiPaths {
  readonly paths?: Readonly<Record<string, Readonly<Record<string, { readonly operationId?: unknown }>>>>
}

/**
 * Calls by key, untyped: GET, HEAD and DELETE queries send their input as a query string (refusing,
 * with a TypeError, values it cannot carry), the others as a JSON body; an error response, a 304 (to a
 * call's own If-None-Match), a success that is not JSON or no response at all throws a `ServeClientError`.
 */
export const createTransport = (options: ClientOptions<Readonly<Record<string, unknown>>>): ClientTransport => {
  const fetchImpl = options.fetch ?? globalThis.fetch
  const baseUrl = options.baseUrl.replace(/\/+$/, "")
  const listed = (options.methods ?? {}) as Readonly<Record<string, HttpMethod | undefined>>
  const documentUrl = baseUrl + joinPath(options.openapiPath ?? "/openapi.json")
  let documented: Promise<ReadonlyMap<string, HttpMethod> | undefined> | undefined

  const baseHeaders = (): HeadersInit | Promise<HeadersInit> =>
    typeof options.headers === "function" ? options.headers() : options.headers ?? {}

  /** Each operation's method, from the OpenAPI document; undefined when the server publishes none (404). */
  const readDocument = async (): Promise<ReadonlyMap<string, HttpMethod> | undefined> => {
    const response = await reach(fetchImpl, documentUrl, { headers: await baseHeaders() }, `Loading the OpenAPI document ${documentUrl}`)
    const text = await response.text()
    if (response.status === 404) return undefined
    if (!response.ok) {
      const envelope = parseErrorEnvelope(text)
      const message = `Loading the OpenAPI document ${documentUrl} failed: ${envelope?.error.message ?? `HTTP ${response.status}`}`
      throw new ServeClientError(response.status, envelope, requestIdOf(response), message)
    }
    const document = parseAnswer(response, text, `The OpenAPI document ${documentUrl}`) as OpenApiPaths
    const methods = new Map<string, HttpMethod>()
    for (const pathItem of Object.values(document.paths ?? {})) {
      for (const [method, operation] of Object.entries(pathItem)) {
        if (typeof operation.operationId === "string") methods.set(operation.operationId, method.toUpperCase() as HttpMethod)
      }
    }
    return methods
  }

  const methodOf = async (key: string, signal: AbortSignal | undefined): Promise<HttpMethod> => {
    const method = listed[key]
    if (method !== undefined) return method
    // A 404 is kept (the server does not publish the document); any other failure is not: the next call tries again.
    documented ??= readDocument().catch((error: unknown) => {
      documented = undefined
      throw error
    })
    const methods = await untilAborted(documented, signal)
    // Without a document, `methods` lists every query that is not GET.
    if (methods === undefined) return "GET"
    const found = methods.get(key)
    if (found === undefined) throw new Error(`createClient: "${key}" is not an operation of ${documentUrl}`)
    return found
  }

  /** `path` is under `baseUrl`, already percent-encoded. */
  const send = async (method: HttpMethod, path: string, input: unknown, callOptions: CallOptions): Promise<unknown> => {
    const headers = new Headers(await baseHeaders())
    new Headers(callOptions.headers).forEach((value, name) => headers.set(name, value))
    const inQueryString = QUERY_STRING_METHODS.has(method)
    if (!inQueryString && input !== undefined) headers.set("content-type", "application/json")
    const url = baseUrl + path
    const response = await reach(fetchImpl, url + (inQueryString ? queryString(input) : ""), {
      method,
      headers,
      body: inQueryString || input === undefined ? undefined : JSON.stringify(input),
      signal: callOptions.signal
    }, `${method} ${url}`)
    const text = await response.text()
    if (!response.ok) throw failureOf(response, text)
    return text.length === 0 ? undefined : parseAnswer(response, text, `The answer of ${method} ${url}`)
  }

  return {
    call: async (key, input, callOptions = {}) => send(await methodOf(key, callOptions.signal), queryPath(key), input, callOptions),
    queryDataset: (name, query, callOptions = {}) =>
      send("POST", `/datasets/${encodeURIComponent(name)}`, query, callOptions) as Promise<DatasetAnswer>
  }
}

/**
 * A typed client for an API defined with `defineServe`: `createClient<typeof api>({ baseUrl })`, then
 * `await client.revenue({ from: "2024-01-01" })`, sending and failing as `createTransport` says. A
 * query named `then` cannot be called this way: the client is not a promise.
 */
export const createClient = <TApi extends { readonly queries: ServeQueriesMap }>(
  options: ClientOptions<QueriesOf<TApi>>
): ServeClient<QueriesOf<TApi>> => {
  const { call } = createTransport(options)
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

/** The datasets of an API defined with `defineServe`, from its type. */
export type DatasetsOf<TApi> = TApi extends { readonly datasets: infer D } ? D : {}

/** Dataset queries for an API's client: fields named by the model, rows typed by the query. */
export interface DatasetClient<TDatasets> {
  /** `POST {baseUrl}/datasets/{name}`: the answer `{ data, page }`, or a ServeClientError with the envelope. */
  query<N extends keyof TDatasets & string, const Q extends DatasetQueryOf<TDatasets[N]>>(
    name: N,
    query: Q,
    options?: CallOptions
  ): Promise<DatasetResult<TDatasets[N], Q>>
}

/**
 * A typed client for an API's datasets: `createDatasetClient<typeof api>({ baseUrl })`, then
 * `await datasets.query("orders", { dimensions: ["region"], measures: ["revenue"] })`. It sends and
 * fails as `createClient` does.
 */
export const createDatasetClient = <TApi extends { readonly queries: ServeQueriesMap }>(
  options: ClientOptions<QueriesOf<TApi>>
): DatasetClient<DatasetsOf<TApi>> => {
  const { queryDataset } = createTransport(options)
  return { query: (name, query, callOptions) => queryDataset(name, query as DatasetQuery, callOptions) as never }
}
