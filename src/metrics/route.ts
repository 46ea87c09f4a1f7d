import type { AuthStrategy, EndpointInfo } from "../domain/config.js"
import type { MetricsPlan } from "./options.js"
import { andThen } from "../domain/maybePromise.js"
import { type GuardPlan, runGuards } from "../stages/guards.js"
import type { AuthServiceShape } from "../services/AuthService.js"
import type { StaticRoute } from "../stages/staticRoute.js"
import type { MetricsScrape, MetricsService } from "./service.js"

/** The `endpoint.key` strategies see when they authenticate a scrape. */
const METRICS_ROUTE_KEY = "$metrics"

const answer = (scrape: MetricsScrape) => ({
  status: 200,
  headers: { "content-type": scrape.contentType, "cache-control": "no-store" },
  body: scrape.body
})

/**
 * The metrics route: not an endpoint (no events, not in the OpenAPI document), but behind the
 * global strategies unless public, with the same 401/403 envelopes as an endpoint. Built on each
 * compile, so strategies added with `useAuth` guard it too.
 */
export const metricsRoute = (
  globalStrategies: ReadonlyArray<AuthStrategy>,
  plan: MetricsPlan,
  metrics: MetricsService,
  authenticator: AuthServiceShape
): StaticRoute => {
  const strategies = plan.public ? [] : [...globalStrategies]
  // Never open by accident: without `public: true` a scrape needs a caller, so an API without global
  // strategies answers 401 until it says the series are public.
  const guard: GuardPlan = {
    requiresAuth: !plan.public,
    requiredRoles: plan.roles,
    requiredScopes: []
  }
  const info: EndpointInfo = {
    key: METRICS_ROUTE_KEY,
    name: "metrics",
    path: plan.path,
    method: "GET",
    requiresAuth: guard.requiresAuth,
    requiredRoles: plan.roles,
    requiredScopes: [],
    summary: "Prometheus metrics",
    description: undefined,
    tags: [],
    cacheTtlMs: null,
    custom: undefined
  }
  const scrape = () => metrics.scrape().then(answer)
  return {
    method: "GET",
    path: plan.path,
    key: METRICS_ROUTE_KEY,
    respond: guard.requiresAuth
      ? (request) =>
        andThen(authenticator.authenticate(strategies, request, info), (caller) => {
          runGuards(guard, caller)
          return scrape()
        })
      : scrape
  }
}
