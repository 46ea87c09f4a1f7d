import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { type EndpointCache, inProcessValue, ResultCache, resultCacheControl, resultCacheStore } from "../cache/resultCache.js"
import type { ServeAuthContext, ServeContext } from "../domain/config.js"
import type { ServeDefinition } from "../config/definition.js"
import { toErrorResponse } from "../domain/envelope.js"
import { NotFound, type ServeError, ServeHttpError, shuttingDown, toServeError } from "../domain/errors.js"
import type { QueryTransport } from "../domain/event.js"
import { getHeader, type HttpMethod, type ServeRequest, type ServeResponse } from "../domain/http.js"
import { andThen, type MaybePromise, isPromiseLike } from "../domain/maybePromise.js"
import { Metrics } from "../metrics/Metrics.js"
import { metricsRoute } from "../metrics/route.js"
import { limitAuthFailures } from "../auth/authFailures.js"
import { type PresetInputs, RequestContext } from "../stages/context.js"
import { runGuards } from "../stages/guards.js"
import { compileCors, type CorsPlan } from "../stages/cors.js"
import { settleBeforeDeadline } from "../stages/deadline.js"
import { FORMAT_SUFFIXES, negotiateFormat, type Representation } from "../stages/formats.js"
import { type EffectFibers, type EffectRunner, makeEffectRunner, settle } from "../stages/invoke.js"
import { type ExecutionRecord, Lifecycle } from "../stages/lifecycle.js"
import { composeMiddlewares } from "../stages/middleware.js"
import { type ShapedOutput, shapeOutput } from "../stages/output.js"
import { errorResponse, finishHeaders, type Settled, toResponse } from "../stages/respond.js"
import { type EndpointPlan, type RoutePlan } from "../stages/plan.js"
import { compileRoutes } from "./compile.js"
import { resolveRequestId } from "../stages/requestId.js"
import { answerStatic, type StaticRoute } from "../stages/staticRoute.js"
import { normalizePath, respelledPath, Router } from "../stages/router.js"
import { EndpointStages, makeStageSteps } from "./spine.js"
import { tracedStages, tracingEnabled } from "./tracing.js"
import { type CallOptions, Pipeline, type PipelineService } from "../services/Pipeline.js"
import { AuthService, type AuthServiceShape } from "../services/AuthService.js"

import { type ServeQueryLogger } from "../stages/events.js"
import { QueryLogger } from "../services/QueryLogger.js"
import { RateLimitStore, type RateLimitStoreService } from "../services/RateLimitStore.js"
import { TenantService, type TenantServiceShape } from "../services/TenantService.js"

interface Stages {
  readonly authenticator: AuthServiceShape
  readonly tenants: TenantServiceShape
  /** Where rate limits without a store of their own count. */
  readonly rateLimitStore: RateLimitStoreService
  readonly lifecycle: Lifecycle
  /** Where the Effects run; once `closing`, every request is refused. */
  readonly fibers: EffectFibers
  readonly runEffect: EffectRunner
  /** Run each request through the traced stages (an Effect span per stage). */
  readonly tracing: boolean
  /** Present when `resultCache` is on. */
  readonly resultCache?: ResultCache | undefined
}

interface CompiledEndpoint {
  readonly plan: EndpointPlan
  readonly stages: EndpointStages
  /** The endpoint's result cache stage, when the cache is on and its TTL is positive. */
  readonly cache: EndpointCache | undefined
}

/** An endpoint route (a `.csv`/`.ndjson` one answers in its fixed representation), or a static one. */
type RouteTarget =
  | { readonly endpoint: CompiledEndpoint; readonly representation?: Representation }
  | { readonly static: StaticRoute }

const makePipeline = (
  definition: ServeDefinition,
  stages: Stages,
  staticRoutes: () => ReadonlyArray<StaticRoute>
): PipelineService => {
  const { lifecycle, fibers, runEffect, tracing, resultCache } = stages
  const steps = makeStageSteps(definition, stages.authenticator, stages.tenants)
  const cors: CorsPlan | undefined = compileCors(definition.cors)
  let router = new Router<RouteTarget>()
  let routePlans: ReadonlyArray<RoutePlan> = []
  const byKey = new Map<string, CompiledEndpoint>()

  const compile = (): void => {
    const next = new Router<RouteTarget>()
    const plans = compileRoutes(definition, stages.rateLimitStore)
    byKey.clear()
    // Routes that also answer at `.csv` and `.ndjson`: every GET, and the routes whose answers are pages (a dataset query is a POST).
    const suffixed: Array<{ readonly method: HttpMethod; readonly path: string; readonly endpoint: CompiledEndpoint }> = []
    for (const route of plans) {
      let compiled = byKey.get(route.endpoint.info.key)
      if (compiled === undefined) {
        const plan = route.endpoint
        const handler = (ctx: ServeContext) => settle(plan.invoke(ctx.input, ctx), ctx, runEffect)
        const cache = resultCache?.forEndpoint(plan)
        const chain = composeMiddlewares(
          plan.middlewares,
          cache === undefined ? handler : cache.handler((ctx) => andThen(handler(ctx.asServeContext()), plan.output.encode))
        )
        compiled = { plan, cache, stages: new EndpointStages(steps, plan, chain, cache === undefined) }
        byKey.set(plan.info.key, compiled)
      }
      next.add(route.method, route.path, { endpoint: compiled })
      if (route.method === "GET" || route.endpoint.answersPages) suffixed.push({ method: route.method, path: route.path, endpoint: compiled })
    }
    for (const route of staticRoutes()) {
      if (route.yields !== true || next.find(route.method, route.path) === undefined) next.add(route.method, route.path, { static: route })
    }
    for (const { method, path, endpoint } of suffixed) {
      for (const [suffix, representation] of FORMAT_SUFFIXES) {
        // A route of that exact name (a query key ending in ".csv") keeps priority.
        if (next.find(method, path + suffix) === undefined) next.add(method, path + suffix, { endpoint, representation })
      }
    }
    router = next
    routePlans = plans
  }
  compile()

  /**
   * The handler's value shaped for the wire (a value the format cannot hold fails), or in the form
   * another transport's `encode` gives it, and reported.
   */
  const succeed = (
    compiled: CompiledEndpoint,
    ctx: RequestContext,
    record: ExecutionRecord | undefined,
    representation: Representation | undefined,
    encode: CallOptions["encode"] | undefined,
    value: unknown
  ): MaybePromise<Settled> => {
    let output: MaybePromise<ShapedOutput>
    let answer = value
    try {
      output = shapeOutput(compiled.plan, ctx, value, representation)
      if (encode !== undefined) answer = encode(inProcessValue(value))
    } catch (thrown) {
      return fail(ctx, record, thrown)
    }
    return isPromiseLike(output)
      ? Promise.resolve(output).then((shaped) => completed(ctx, record, value, answer, shaped), (thrown: unknown) => fail(ctx, record, thrown))
      : completed(ctx, record, value, answer, output)
  }

  const completed = (ctx: RequestContext, record: ExecutionRecord | undefined, value: unknown, answer: unknown, output: ShapedOutput): Settled => {
    if (record !== undefined) lifecycle.completed(record, ctx.input, output.status, value, ctx.cacheStatus)
    return { ok: true, value: answer, ctx, output }
  }

  const fail = (ctx: RequestContext, record: ExecutionRecord | undefined, thrown: unknown): Settled => {
    const error = toServeError(thrown)
    if (record !== undefined) lifecycle.failed(record, ctx.input, toErrorResponse(error).status, error)
    return { ok: false, error, ctx }
  }

  /** Runs an endpoint and reports it to the lifecycle; never throws. Closures only on the async path. */
  const execute = (
    compiled: CompiledEndpoint,
    request: ServeRequest,
    requestId: string,
    preset: PresetInputs | undefined,
    representation: Representation | undefined,
    transport: QueryTransport | undefined,
    encode?: CallOptions["encode"]
  ): MaybePromise<Settled> => {
    const ctx = new RequestContext(request, requestId, compiled.plan.info, null)
    let record: ExecutionRecord | undefined
    if (lifecycle.observed()) {
      record = {
        requestId,
        endpointKey: compiled.plan.info.key,
        method: request.method,
        path: request.path,
        request,
        startTime: Date.now(),
        startedAt: performance.now(),
        transport
      }
      lifecycle.started(record)
    }
    let result: MaybePromise<unknown>
    try {
      result = tracing
        ? runEffect(tracedStages(steps, compiled.plan, ctx, preset, compiled.cache, fibers), ctx.signal)
        : compiled.stages.run(ctx, preset)
    } catch (thrown) {
      return fail(ctx, record, thrown)
    }
    if (!isPromiseLike(result)) return succeed(compiled, ctx, record, representation, encode, result)
    return settleBeforeDeadline(
      result,
      request,
      (value) => succeed(compiled, ctx, record, representation, encode, value),
      (thrown) => fail(ctx, record, thrown)
    )
  }

  const handle = (request: ServeRequest): MaybePromise<ServeResponse> => {
    if (fibers.closing) return refusedRequest(request, cors)
    const requestId = resolveRequestId(request)
    const corsHeaders = cors?.headersFor(getHeader(request, "origin"))
    const method = request.method
    const path = normalizePath(request.path)
    if (method === "OPTIONS" && cors !== undefined) {
      const preflight = cors.preflightFor(getHeader(request, "origin"), getHeader(request, "access-control-request-headers"))
      return { status: 204, headers: finishHeaders({}, requestId, preflight, undefined), body: null }
    }
    let target = router.find(method, path)
    let routedPath = path
    if (target === undefined) {
      const respelled = respelledPath(path)
      if (respelled !== undefined) target = router.find(method, (routedPath = respelled))
    }
    if (target === undefined) {
      const allow = router.allowed(routedPath)
      const error = allow === undefined
        ? new NotFound({ message: `No route for ${method} ${path}` })
        : new NotFound({ message: `Method ${method} is not allowed on ${path}`, allow })
      return errorResponse(error, requestId, corsHeaders, undefined)
    }
    if ("static" in target) return answerStatic(target.static, request, requestId, corsHeaders, lifecycle)
    const representation = target.representation ?? negotiateFormat(getHeader(request, "accept"))
    const settled = execute(target.endpoint, request, requestId, undefined, representation, "http")
    const head = method === "HEAD"
    return isPromiseLike(settled)
      ? Promise.resolve(settled).then((s) => toResponse(s, requestId, corsHeaders, head))
      : toResponse(settled, requestId, corsHeaders, head)
  }

  return {
    handle,
    execute: (key, options = {}) => {
      if (fibers.closing) return Promise.reject(refusedExecution())
      const compiled = byKey.get(key)
      if (compiled === undefined) return Promise.reject(new Error(`Unknown query "${key}"`))
      const request: ServeRequest = {
        method: compiled.plan.info.method,
        path: compiled.plan.info.path,
        headers: {},
        ...options.request
      }
      const requestId = resolveRequestId(request)
      // No input reads as a request without parameters does (`{}`, or undefined for a void schema),
      // so that an endpoint whose fields are all optional runs, and caches, as it does over HTTP.
      const input = options.input === undefined ? compiled.plan.input.coerce({}) : options.input
      const preset: PresetInputs = { input, context: options.context, auth: options.context?.auth as ServeAuthContext | null | undefined }
      return Promise.resolve(execute(compiled, request, requestId, preset, undefined, undefined)).then((settled) => {
        if (settled.ok) return inProcessValue(settled.value)
        throw toThrowable(settled.error)
      })
    },
    routes: () => routePlans,
    endpoint: (key) => byKey.get(key)?.plan.info,
    refresh: compile,
    authenticate: (strategies, request, endpoint) => stages.authenticator.authenticate(strategies, request, endpoint),
    admits: (key, caller) => {
      const plan = byKey.get(key)?.plan
      if (plan === undefined) return false
      try {
        runGuards(plan, caller)
        if (plan.tenant !== undefined) stages.tenants.resolve(plan.tenant, caller)
        return true
      } catch {
        return false
      }
    },
    call: (key, options) => {
      if (fibers.closing) return { ok: false, error: shuttingDown }
      const compiled = byKey.get(key)
      if (compiled === undefined) return { ok: false, error: new NotFound({ message: `No endpoint named "${key}"` }) }
      return andThen(execute(compiled, options.request, options.requestId, options, undefined, options.transport, options.encode), (settled) =>
        settled.ok ? { ok: true, value: settled.value } : settled)
    },
    cache: resultCacheControl(resultCache, (key) => byKey.has(key))
  }
}

/** `execute` rejects with a ServeHttpError that carries the response's status, type, message and details. */
export const toThrowable = (error: ServeError): Error => {
  if (error._tag === "ServeHttpError") return error
  const { status, envelope, headers } = toErrorResponse(error)
  return new ServeHttpError(status, envelope.error.type, envelope.error.message, { details: envelope.error.details, headers })
}

/** The answer to a request once the pipeline is being released (`api.dispose()`): 503 SERVICE_UNAVAILABLE. */
export const refusedRequest = (request: ServeRequest, cors: CorsPlan | undefined): ServeResponse =>
  errorResponse(shuttingDown, resolveRequestId(request), cors?.headersFor(getHeader(request, "origin")), undefined)

/** What `execute` rejects with once the pipeline is being released: the 503's ServeHttpError. */
export const refusedExecution = (): Error => toThrowable(shuttingDown)

/**
 * The request pipeline over a definition. Handlers that return an Effect run on the runtime this
 * layer is built in, so the services provided to it (config.layer) reach them. With `metrics` on,
 * the Metrics service (required then) observes the logger's events and gets its route. Releasing
 * the layer refuses requests from then on (503), interrupts the Effects still running and waits for
 * their finalizers: its services are released after this layer.
 */
export const makePipelineLayer = (
  definition: ServeDefinition,
  staticRoutes: () => ReadonlyArray<StaticRoute> = () => []
): Layer.Layer<Pipeline, never, AuthService | TenantService | QueryLogger | RateLimitStore> =>
  Layer.scoped(
    Pipeline,
    Effect.gen(function*() {
      // Every route that authenticates (endpoints, MCP, metrics) counts failures and refuses used-up addresses.
      const rateLimitStore = yield* RateLimitStore
      const authenticator = limitAuthFailures(yield* AuthService, definition.authFailureLimit, rateLimitStore)
      const tenants = yield* TenantService
      const logger: ServeQueryLogger = yield* QueryLogger
      // Finalizers run in reverse: the flag (no request starts), then the running Effects are interrupted
      // and awaited, then what they added to the Scope they see is released; the services come after.
      const handlerScope = yield* Scope.make()
      yield* Effect.addFinalizer((exit) => Scope.close(handlerScope, exit))
      const fibers: EffectFibers = { set: yield* FiberSet.make(), closing: false }
      yield* Effect.addFinalizer(() => Effect.sync(() => (fibers.closing = true)))
      const runtime = Runtime.updateContext(yield* Effect.runtime<never>(), Context.add(Scope.Scope, handlerScope))
      const plan = definition.metrics
      let routes = staticRoutes
      if (plan !== undefined) {
        const metrics = yield* Effect.serviceOption(Metrics).pipe(
          Effect.map(Option.getOrThrowWith(() => new Error("metrics is on but no Metrics service was provided: provide Metrics.layer()")))
        )
        logger.on(metrics.observe)
        routes = () => [...staticRoutes(), metricsRoute(definition.strategies, plan, metrics, authenticator)]
      }
      const store = yield* resultCacheStore(definition.resultCache)
      return makePipeline(
        definition,
        {
          authenticator,
          tenants,
          rateLimitStore,
          lifecycle: new Lifecycle(logger, definition.hooks),
          fibers,
          runEffect: makeEffectRunner(runtime, fibers),
          tracing: yield* tracingEnabled,
          resultCache: store === undefined ? undefined : new ResultCache(store)
        },
        routes
      )
    })
  )
