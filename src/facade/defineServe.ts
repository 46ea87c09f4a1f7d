import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Runtime from "effect/Runtime"
import type { AuthStrategy, ServeAuthContext, ServeMiddleware, ServeQueriesMap, ServeQueryEntry } from "../domain/config.js"
import type { ServeConfig } from "../config/ServeConfig.js"
import type { Dataset } from "../datasets/dataset.js"
import { datasetQueryKey } from "../datasets/endpoints.js"
import type { DatasetQuery, DatasetResult } from "../datasets/query.js"
import type { ResultCacheControl } from "../cache/resultCache.js"
import { normalizeConfig, type RouteDefinition, type ServeDefinition } from "../config/definition.js"
import { joinPath } from "../domain/paths.js"
import type { HttpMethod, ServeHandler, ServeRequest, ServeResponse } from "../domain/http.js"
import type { MaybePromise } from "../domain/maybePromise.js"
import { type ContractPaths, contractPaths, contractRoutes } from "../docs/routes.js"
import { makeServeLayer } from "../pipeline/serveLayer.js"
import { mcpRoutes } from "../mcp/route.js"
import { type ServeEndpoint } from "../openapi/endpoint.js"
import { describeRoutes } from "../pipeline/describeRoutes.js"
import { checkAuthFailureLimit } from "../auth/authFailures.js"
import { compileCors } from "../stages/cors.js"
import { checkTenantConfigs } from "../pipeline/compile.js"
import { StageTracing } from "../pipeline/tracing.js"
import { Pipeline, type PipelineService } from "../services/Pipeline.js"
import { refusedExecution, refusedRequest } from "../pipeline/Pipeline.js"
import { makeQueryLogger, type ServeQueryLogger } from "../stages/events.js"
import { QueryLogger } from "../services/QueryLogger.js"
import { attachConfiguredLogging } from "./logging.js"
import type { QueryInput, QueryOutput, TakesNothing } from "./types.js"
import type { NodeServerOptions, RunningServer } from "../server/serverOptions.js"
import { startServerFor } from "./serverStart.js"

export interface ExecuteOptions<TInput = unknown> {
  readonly input?: TInput
  /** Merged into `ctx`; an `auth` entry is taken as the authenticated caller (strategies are skipped). */
  readonly context?: Readonly<Record<string, unknown>>
  /** Headers and other request fields the strategies and handler should see. */
  readonly request?: Partial<ServeRequest>
  /**
   * The caller, already authenticated by you (as @hypequery/serve's `trustedAuth`): the strategies
   * are skipped, the role and scope guards and the tenancy apply. Shorthand for `context: { auth }`.
   */
  readonly trustedAuth?: ServeAuthContext
}

/** ExecuteOptions of a query that needs an input. */
export interface ExecuteOptionsWithInput<TInput> extends ExecuteOptions<TInput> {
  readonly input: TInput
}

/** The options of `execute`/`run`: required, with their `input`, exactly when the query needs an input (as in the client). */
export type ExecuteArgs<TInput> = TakesNothing<TInput> extends true ? [options?: ExecuteOptions<TInput>]
  : [options: ExecuteOptionsWithInput<TInput>]

/** `trustedAuth` as the `auth` entry of the context, where the pipeline takes the caller from. */
const trusting = (options: ExecuteOptions | undefined): ExecuteOptions | undefined =>
  options?.trustedAuth === undefined ? options : { ...options, context: { ...options.context, auth: options.trustedAuth } }

export interface RouteOptions {
  readonly method?: HttpMethod
}

/** The datasets an API serves, by name (`config.datasets`). */
type DatasetsMap = Readonly<Record<string, Dataset>>

export interface ServeBuilder<TQueries extends ServeQueriesMap = ServeQueriesMap, TDatasets extends DatasetsMap = {}> {
  readonly queries: TQueries
  /** The datasets it serves, by name (`config.datasets`). */
  readonly datasets: TDatasets
  readonly basePath: string
  /** Where the OpenAPI document and the API-reference page are served; undefined when turned off. */
  readonly contractPaths: ContractPaths
  /** Adds `basePath + path` with `options.method` (default: the endpoint's) as another route to an endpoint. */
  route(path: string, endpoint: (keyof TQueries & string) | ServeQueryEntry, options?: RouteOptions): ServeBuilder<TQueries, TDatasets>
  use(middleware: ServeMiddleware): ServeBuilder<TQueries, TDatasets>
  useAuth(strategy: AuthStrategy): ServeBuilder<TQueries, TDatasets>
  execute<K extends keyof TQueries & string>(key: K, ...options: ExecuteArgs<QueryInput<TQueries[K]>>): Promise<QueryOutput<TQueries[K]>>
  run<K extends keyof TQueries & string>(key: K, ...options: ExecuteArgs<QueryInput<TQueries[K]>>): Promise<QueryOutput<TQueries[K]>>
  /**
   * Asks a dataset a question in-process, through the same stages as `POST {basePath}/datasets/{name}`
   * (a caller given as `context.auth`, its guards and tenant): fields named by the model, rows typed.
   */
  queryDataset<N extends keyof TDatasets & string, const Q extends DatasetQuery<TDatasets[N]>>(
    name: N,
    query: Q,
    options?: Omit<ExecuteOptions, "input">
  ): Promise<DatasetResult<TDatasets[N], Q>>
  /** Every route with its metadata and JSON Schemas: what the OpenAPI document is built from. */
  describe(): ReadonlyArray<ServeEndpoint>
  readonly queryLogger: ServeQueryLogger
  readonly handler: ServeHandler
  /** Serves the API with node:http (the Node entry); the web build throws, naming createFetchHandler. */
  start(options?: NodeServerOptions): Promise<RunningServer>
  /** The server-side result cache (`resultCache`): invalidation and counts; inert when it is off. */
  readonly cache: ResultCacheControl<keyof TQueries & string>
  /** The Effect runtime handlers run on; for Effect users. */
  readonly runtime: ManagedRuntime.ManagedRuntime<Pipeline | QueryLogger, unknown>
  /**
   * Refuses every later request (503 SERVICE_UNAVAILABLE; `execute` rejects with its ServeHttpError),
   * interrupts the Effect handlers still running and waits for their finalizers, then releases the
   * runtime's resources (services of `config.layer`). Calling it again returns the same promise.
   * From then on `start()` and the cache controls reject with an Error that says so.
   */
  dispose(): Promise<void>
}

/** Builds the pipeline synchronously when the layer allows it; an async `config.layer` is awaited on first use. */
const acquirePipeline = (
  runtime: ManagedRuntime.ManagedRuntime<Pipeline, unknown>
): PipelineService | Promise<PipelineService> => {
  const exit = runtime.runSyncExit(Pipeline)
  if (exit._tag === "Success") return exit.value
  const defect = Cause.squash(exit.cause)
  if (Runtime.isAsyncFiberException(defect)) return runtime.runPromise(Pipeline)
  throw defect
}

const WILDCARD_HOSTS: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]"])

/** Whether `route` is the query's own route or one `builder.route` already added. */
const isDeclared = (definition: ServeDefinition, route: RouteDefinition): boolean => {
  const query = definition.queries.get(route.key)!
  if (route.path === joinPath(definition.basePath, route.key) && route.method === (query.method ?? "GET")) return true
  return definition.routes.some((known) => known.key === route.key && known.path === route.path && known.method === route.method)
}

export const defineServe = <
  const TQueries extends ServeQueriesMap,
  TAuth extends ServeAuthContext = ServeAuthContext,
  TContext = {},
  const TDatasets extends DatasetsMap = {}
>(config: ServeConfig<TQueries, TAuth, TContext> & { readonly datasets?: TDatasets }): ServeBuilder<TQueries, TDatasets> => {
  const definition = normalizeConfig(config as unknown as ServeConfig<ServeQueriesMap, never, never>)
  // Configuration mistakes are thrown here, with what to change, never found by a request.
  checkTenantConfigs(definition)
  if (definition.authFailureLimit !== undefined) checkAuthFailureLimit(definition.authFailureLimit)
  const cors = compileCors(definition.cors)
  const logger = makeQueryLogger()
  attachConfiguredLogging(logger, config.queryLogging, config.slowQueryThreshold)
  const extraLayers: Array<Layer.Layer<never, unknown, never>> = []
  if (definition.resultCache?.store !== undefined) extraLayers.push(definition.resultCache.store)
  if (config.layer !== undefined) extraLayers.push(config.layer)
  if (config.tracing !== undefined) extraLayers.push(Layer.succeed(StageTracing, config.tracing))
  /** The pipeline, for what runs once it is built (requests reach static routes only through it). */
  const built = (caller: string): PipelineService => {
    if (pipeline instanceof Promise) throw new Error(`${caller}: the runtime is still starting; await builder.runtime first`)
    return pipeline
  }
  const describe = (): ReadonlyArray<ServeEndpoint> => describeRoutes(built("describe()").routes())
  const staticRoutes = () => [...contractRoutes(definition, describe), ...mcpRoutes(definition, () => built("mcp"))]
  const runtime = ManagedRuntime.make(makeServeLayer(definition, staticRoutes, logger, extraLayers))
  /** Set once dispose() is called: requests are refused from then on, also when the pipeline was never built. */
  let disposing: Promise<void> | undefined
  let pipeline = acquirePipeline(runtime)
  /** A build interrupted by dispose() is no failure: whoever waited for it is refused (`refused`). */
  const unlessDisposed = <A>(refused: () => A) => (error: unknown): A => {
    if (disposing === undefined) throw error
    return refused()
  }
  if (pipeline instanceof Promise) void pipeline.then((ready) => (pipeline = ready), unlessDisposed(() => undefined))
  const withPipeline = <A>(f: (p: PipelineService) => MaybePromise<A>): MaybePromise<A> =>
    pipeline instanceof Promise ? pipeline.then(f) : f(pipeline)

  const keyOf = (endpoint: string | ServeQueryEntry): string => {
    if (typeof endpoint === "string") return endpoint
    // `api.queries.<key>` is the entry as given, a bare function included.
    for (const [key, candidate] of Object.entries(config.queries)) if (candidate === endpoint) return key
    throw new Error("route(): the endpoint is not one of this API's queries")
  }
  const changed = () => void withPipeline((p) => p.refresh())
  /** What is no request but an operation on the API (`start()`, the cache controls) rejects with once it was disposed. */
  const ifNotDisposed = <A>(caller: string, operation: () => Promise<A>): Promise<A> =>
    disposing === undefined
      ? operation()
      : Promise.reject(new Error(`${caller}: this API was disposed (api.dispose()); define it again to use it`))

  const execute = <K extends keyof TQueries & string>(key: K, ...[options]: ExecuteArgs<QueryInput<TQueries[K]>>) =>
    (disposing !== undefined
      ? Promise.reject(refusedExecution())
      : pipeline instanceof Promise
      ? pipeline.then((p) => p.execute(key, trusting(options)), unlessDisposed(() => Promise.reject(refusedExecution())))
      : pipeline.execute(key, trusting(options))) as Promise<QueryOutput<TQueries[K]>>

  // The same three cases as `execute`, written out rather than shared through a helper taking
  // callbacks: every request comes through here, and would allocate them.
  const handle = (request: ServeRequest): MaybePromise<ServeResponse> =>
    disposing !== undefined
      ? refusedRequest(request, cors)
      : pipeline instanceof Promise
      ? pipeline.then((p) => p.handle(request), unlessDisposed(() => refusedRequest(request, cors)))
      : pipeline.handle(request)

  const builder: ServeBuilder<TQueries, TDatasets> = {
    datasets: (config.datasets ?? {}) as TDatasets,
    queries: config.queries,
    basePath: definition.basePath,
    contractPaths: contractPaths(definition),
    route(path, endpoint, options) {
      const key = keyOf(endpoint)
      const query = definition.queries.get(key)
      if (query === undefined) throw new Error(`route(): no query named "${key}"`)
      const route = { key, path: joinPath(definition.basePath, path), method: options?.method ?? query.method ?? "GET" }
      // Code written for @hypequery/serve exposes each query with `route('/<key>', queries.<key>)`: the
      // route every query already has here. It, and a route added twice, are accepted as no-ops.
      if (isDeclared(definition, route)) return builder
      definition.routes.push(route)
      try {
        changed()
      } catch (error) {
        // A path another endpoint already serves: refused here, and the API keeps working as before.
        definition.routes.pop()
        throw error
      }
      return builder
    },
    use(middleware) {
      definition.middlewares.push(middleware)
      changed()
      return builder
    },
    useAuth(strategy) {
      definition.strategies.push(strategy)
      changed()
      return builder
    },
    execute,
    run: execute,
    queryDataset: (name, query, options) =>
      execute(datasetQueryKey(name) as keyof TQueries & string, { ...options, input: query } as never) as never,
    describe,
    queryLogger: logger,
    // Adapters give the answers they make themselves (413, 408, 503 while draining) the same CORS headers.
    handler: Object.assign(handle, { corsHeaders: cors?.headersFor }),
    start: (options) =>
      ifNotDisposed("start()", () =>
        startServerFor(builder.handler, options, builder.contractPaths).then((server) => {
          // The document names where it is served; a wildcard address is no URL a client can use.
          if (!WILDCARD_HOSTS.has(server.hostname)) {
            definition.listening.url = server.url
            changed()
          }
          return server
        })),
    cache: {
      enabled: definition.resultCache !== undefined,
      invalidate: (filter) => ifNotDisposed("cache.invalidate()", () => Promise.resolve(withPipeline((p) => p.cache.invalidate(filter)))),
      stats: () => ifNotDisposed("cache.stats()", () => Promise.resolve(withPipeline((p) => p.cache.stats())))
    },
    runtime,
    // Memoized: a second call while the first still waits for finalizers must not resolve before them.
    dispose: () => (disposing ??= runtime.dispose())
  }
  return builder
}
