import * as Layer from "effect/Layer"
import type { ServeConfig, ServeQueriesMap } from "../domain/config.js"
import { normalizeConfig, type ServeDefinition } from "../domain/definition.js"
import { Metrics } from "../metrics/Metrics.js"
import { Authenticator } from "../services/Authenticator.js"
import { Pipeline, type StaticRoute } from "../services/Pipeline.js"
import { QueryLogger } from "../services/QueryLogger.js"
import { TenantIsolation } from "../services/TenantIsolation.js"

/** The default services of every stage; a test or an Effect user replaces any of them by providing its own. */
export const defaultServicesLayer = Layer.mergeAll(Authenticator.layer, TenantIsolation.layer, QueryLogger.layer)

/**
 * What a ServeConfig compiles to: the Pipeline over the definition, with the default stage services
 * (and the prom-client Metrics when `metrics` is on) and the user's `layer` (services of Effect
 * handlers; a service it provides replaces the default).
 */
export const makeServeLayer = (
  definition: ServeDefinition,
  staticRoutes: () => ReadonlyArray<StaticRoute>,
  userLayer: Layer.Layer<never, unknown, never> = Layer.empty
): Layer.Layer<Pipeline | Authenticator | TenantIsolation | QueryLogger, unknown> => {
  const defaults = definition.metrics === undefined
    ? defaultServicesLayer
    : Layer.merge(defaultServicesLayer, Metrics.layer({ buckets: definition.metrics.buckets }))
  return Pipeline.layer(definition, staticRoutes).pipe(Layer.provideMerge(Layer.merge(defaults, userLayer)))
}

/**
 * The Pipeline for a ServeConfig, still requiring its stage services: provide `defaultServicesLayer`,
 * or test doubles of any of them.
 */
export const pipelineLayer = (
  config: ServeConfig<ServeQueriesMap, never, never>
): Layer.Layer<Pipeline, never, Authenticator | TenantIsolation | QueryLogger> => Pipeline.layer(normalizeConfig(config))
