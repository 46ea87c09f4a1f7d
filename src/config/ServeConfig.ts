import type * as Layer from "effect/Layer"
import type { AuthFailureLimitOptions, SecurityOptions } from "../auth/options.js"
import type { ResultCacheOptions } from "../cache/options.js"
import type { DocsOptions } from "../docs/options.js"
import type { AuthStrategy, ServeAuthContext, ServeContextFactory, ServeMiddleware, ServeQueriesMap, TenantConfig } from "../domain/config.js"
import type { ServeQueryEvent } from "../domain/event.js"
import type { Dataset } from "../datasets/dataset.js"
import type { SqlExecutor } from "../datasets/executor.js"
import type { McpOptions } from "../mcp/options.js"
import type { MetricsOptions } from "../metrics/options.js"
import type { OpenApiOptions } from "../openapi/options.js"
import type { CorsOptions } from "../stages/cors.js"
import type { ServeLifecycleHooks } from "../stages/lifecycle.js"

export type QueryLoggingOption = boolean | "json" | ((event: ServeQueryEvent) => void)

export interface ServeConfig<
  TQueries extends ServeQueriesMap = ServeQueriesMap,
  TAuth extends ServeAuthContext = ServeAuthContext,
  TContext = {}
> {
  readonly queries: TQueries
  readonly basePath?: string
  readonly middlewares?: ReadonlyArray<ServeMiddleware<unknown, TAuth, TContext>>
  readonly auth?: AuthStrategy<TAuth> | ReadonlyArray<AuthStrategy<TAuth>>
  readonly tenant?: TenantConfig<TAuth>
  readonly docs?: DocsOptions
  readonly openapi?: OpenApiOptions
  readonly context?: ServeContextFactory<TContext, TAuth>
  readonly hooks?: ServeLifecycleHooks
  readonly queryLogging?: QueryLoggingOption
  readonly slowQueryThreshold?: number
  readonly cors?: true | CorsOptions
  /**
   * Keep the results of every endpoint with `cacheTtlMs > 0` for that long, per endpoint, input and
   * caller scope, and answer repeated requests from them (`x-cache: HIT`). Off by default.
   */
  readonly resultCache?: boolean | ResultCacheOptions
  /** Throttle credential guessing per client address (off by default). */
  readonly authFailureLimit?: AuthFailureLimitOptions
  readonly security?: SecurityOptions
  /** Services for handlers that return an Effect. */
  readonly layer?: Layer.Layer<never, unknown, never>
  /**
   * Run every stage in an Effect span (`queryserve.authenticate`, `.guards`, ...). Default: on when
   * `layer` installs a tracer (e.g. @effect/opentelemetry), off otherwise; off costs nothing.
   */
  readonly tracing?: boolean
  /** Prometheus metrics of every endpoint at `basePath + "/metrics"` (prom-client, loaded only when on). */
  readonly metrics?: boolean | MetricsOptions
  /**
   * Serves every endpoint as a tool for AI agents over the Model Context Protocol (Streamable HTTP,
   * stateless) at `basePath + /mcp`, behind the same auth, guards, tenant isolation and rate limits.
   */
  readonly mcp?: boolean | McpOptions
  /**
   * Datasets callers (and agents, over MCP) query with dimensions, measures and filters of their
   * choosing, each under its name: `{ orders: Orders }` for `dataset("orders", …)`. Needs `sql`.
   */
  readonly datasets?: Readonly<Record<string, Dataset>>
  /** Runs the datasets' statements: the demo's DuckDB, Postgres and ClickHouse drivers are SqlExecutors. */
  readonly sql?: SqlExecutor
}
