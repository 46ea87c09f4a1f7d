import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { ServeQueriesMap } from "../domain/config.js"
import { apiNamespace, ResultCacheNamespace } from "../cache/cacheNamespace.js"
import type { ServeConfig } from "../config/ServeConfig.js"
import { normalizeConfig, type ServeDefinition } from "../config/definition.js"
import { Metrics } from "../metrics/Metrics.js"
import { AuthService, strategyChain } from "../services/AuthService.js"
import type { Pipeline } from "../services/Pipeline.js"
import { makePipelineLayer } from "./Pipeline.js"
import { type StaticRoute } from "../stages/staticRoute.js"
import { type ServeQueryLogger } from "../stages/events.js"
import { makeMemoryRateLimitStore, memoryRateLimitStoreLayer } from "../services/memoryRateLimitStore.js"
import { QueryLogger } from "../services/QueryLogger.js"
import { RateLimitStore } from "../services/RateLimitStore.js"
import { TenantService, tenantIsolation } from "../services/TenantService.js"

/** The default services of every stage; a test or an Effect user replaces any of them by providing its own. */
export const defaultServicesLayer = Layer.mergeAll(AuthService.layer, TenantService.layer, QueryLogger.layer, memoryRateLimitStoreLayer())

type Services = AuthService | TenantService | QueryLogger | RateLimitStore

/**
 * The default services with the builder's logger, as one context. Each merged layer is built by a
 * fiber of its own, which a cold start pays for on Effect's still unoptimized runtime: one context
 * instead of one layer each, and no layer for what is off, took 15–20 ms off `defineServe`. The
 * RateLimitStore is one memory store per API.
 */
const defaultServices = (logger: ServeQueryLogger): Layer.Layer<Services> =>
  Layer.succeedContext(
    Context.make(AuthService, strategyChain).pipe(Context.add(TenantService, tenantIsolation), Context.add(QueryLogger, logger),
      Context.add(RateLimitStore, makeMemoryRateLimitStore())
    )
  )

/**
 * The namespace the layers of a configuration with a result cache see: a shared store without a
 * prefix of its own keeps this API's entries apart from another's under it.
 */
const namespaceLayer = (definition: ServeDefinition): Layer.Layer<ResultCacheNamespace> => {
  const openapi = definition.openapi
  const shape = {
    basePath: definition.basePath,
    endpoints: [...definition.queries].map(([key, query]) => [key, query.method ?? "GET"] as const),
    title: openapi.info?.title ?? openapi.title,
    version: openapi.info?.version ?? openapi.version
  }
  return Layer.succeed(ResultCacheNamespace, apiNamespace(definition.resultCache?.namespace, shape))
}

/**
 * What a ServeConfig compiles to: the Pipeline over the definition, with the default stage services
 * (and the prom-client Metrics when `metrics` is on), then `extra`: the layers the configuration
 * adds, told the API's result cache namespace, in this order (its result cache store, the user's
 * `layer` with the services of Effect handlers, `tracing`), the later replacing a service an
 * earlier one provides.
 */
export const makeServeLayer = (
  definition: ServeDefinition,
  staticRoutes: () => ReadonlyArray<StaticRoute>,
  logger: ServeQueryLogger,
  extra: ReadonlyArray<Layer.Layer<never, unknown, never>> = []
): Layer.Layer<Pipeline | Services, unknown> => {
  const namespace = definition.resultCache === undefined ? undefined : namespaceLayer(definition)
  const named = namespace === undefined ? extra : extra.map((layer) => Layer.provide(layer, namespace))
  const added = definition.metrics === undefined ? named : [Metrics.layer({ buckets: definition.metrics.buckets }), ...named]
  const services = added.length === 0
    ? defaultServices(logger)
    : Layer.merge(defaultServices(logger), added.reduce((merged, layer) => Layer.merge(merged, layer)))
  return makePipelineLayer(definition, staticRoutes).pipe(Layer.provideMerge(services))
}

/**
 * The Pipeline for a ServeConfig, still requiring its stage services: provide `defaultServicesLayer`,
 * or test doubles of any of them.
 */
export const pipelineLayer = (
  config: ServeConfig<ServeQueriesMap, never, never>
): Layer.Layer<Pipeline, never, Services> => makePipelineLayer(normalizeConfig(config))
