/**
 * queryserve's web build: everything that runs on any runtime with Web standards (workerd, Deno,
 * browsers, Bun, Node), with no `node:` module anywhere in its import graph. Serve an API with
 * `createFetchHandler(api.handler)`; `builder.start()`, `serveDev`, the Node adapters, the Redis
 * stores and prom-client's metrics are in the Node entry (`queryserve/node`, the default where Node's
 * modules exist).
 */
export { defineServe } from "./facade/defineServe.js"
export type { ExecuteArgs, ExecuteOptions, ExecuteOptionsWithInput, RouteOptions, ServeBuilder } from "./facade/defineServe.js"
export { initServe } from "./facade/initServe.js"
export type { InitServeOptions, ServeInit } from "./facade/initServe.js"
export type { ProcedureBuilder } from "./facade/procedure.js"
export { query } from "./facade/standaloneQuery.js"
export { createApiKeyStrategy, createBearerTokenStrategy } from "./facade/credentialStrategies.js"
export type { ApiKeyStrategyOptions, BearerTokenStrategyOptions } from "./facade/credentialStrategies.js"
export { checkRoleAuthorization, checkScopeAuthorization, createAuthSystem } from "./facade/authorizationChecks.js"
export type { AuthorizationResult, CreateAuthSystemOptions, TypedAuthContext } from "./facade/authorizationChecks.js"
export { buildCorsHeaders, buildPreflightHeaders, handleCorsRequest, resolveCorsConfig } from "./facade/corsHelpers.js"
export type { ResolvedCorsConfig } from "./facade/corsHelpers.js"
export { warnTenantMisconfiguration } from "./facade/tenantWarning.js"
export type { DirectExecuteOptions, QueryFactory, QueryObjectConfig, StandaloneQuery } from "./facade/standaloneQuery.js"
export type { QueryInput, QueryOutput } from "./facade/types.js"
export { rowBatches } from "./stages/rowSource.js"
export type { BatchSource } from "./stages/rowSource.js"

export { buildOpenApiDocument } from "./openapi/document.js"
export type { OpenApiDocument, OpenApiOperation } from "./openapi/document.js"
export type { DocumentedMiddleware, ServeEndpoint } from "./openapi/endpoint.js"
export { withSecurityScheme } from "./openapi/securityScheme.js"
export type { DocumentedAuthStrategy, SecurityScheme } from "./openapi/securityScheme.js"
export { buildDocsHtml } from "./docs/html.js"
export type { DocsHtmlOptions } from "./docs/html.js"
export type { JsonSchema } from "./domain/jsonSchema.js"
export { createClient, createDatasetClient } from "./client/createClient.js"
export type { CallOptions, ClientCall, ClientOptions, DatasetClient, DatasetsOf, ServeClient } from "./client/createClient.js"
export { ServeClientError } from "./client/ServeClientError.js"

export type { AnyQueryConfig, AuthStrategy, EndpointInfo, ExecutableQuery, LegacyQuery, QueryResolver, RunnableQuery, ServeAuthContext, ServeContext, ServeContextFactory, ServeMiddleware, ServeQueriesMap, ServeQueryConfig, ServeQueryEntry, TenantConfig, TenantMode, TenantOverride } from "./domain/config.js"
export type { PageInput, PageWindow, PaginateOptions } from "./domain/config.js"
export type { ServeLifecycleHooks } from "./stages/lifecycle.js"
export type { ResultCacheOptions } from "./cache/options.js"
export type { McpOptions } from "./mcp/options.js"
export type { MetricsOptions } from "./metrics/options.js"
export type { AuthFailureLimitOptions } from "./auth/options.js"
export type { CorsOptions } from "./stages/cors.js"
export type { OpenApiOptions } from "./openapi/options.js"
export type { DocsOptions } from "./docs/options.js"
export type { QueryLoggingOption, ServeConfig } from "./config/ServeConfig.js"
export { TenantScopeError } from "./tenancy/autoInject.js"
export { postgresTenantSessions } from "./tenancy/postgresTenantSessions.js"
export type {
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryResult,
  PostgresTenantSessions,
  PostgresTenantSessionsOptions,
  TenantQueries,
  TenantSession
} from "./tenancy/postgresTenantSessions.js"
export type { ErrorEnvelope } from "./domain/envelope.js"
export { toErrorResponse } from "./domain/envelope.js"
export {
  DatabaseUnreachable,
  Forbidden,
  GatewayTimeout,
  InternalError,
  NotAcceptable,
  NotFound,
  PayloadTooLarge,
  QueryFailure,
  RateLimited,
  ServeHttpError,
  ServiceUnavailable,
  Unauthorized,
  ValidationError
} from "./domain/errors.js"
export type { ErrorType, ServeError, ServeHttpErrorOptions, ValidationIssue } from "./domain/errors.js"
export type { QueryTransport, ServeQueryEvent } from "./domain/event.js"
export { formatQueryEvent, formatQueryEventJSON } from "./domain/event.js"
export { getHeader, normalizeHeaderMap } from "./domain/http.js"
export type { CorsHeaders, HttpMethod, ServeHandler, ServeRequest, ServeResponse } from "./domain/http.js"
export type { SchemaInput, SchemaOutput, ServeSchema } from "./domain/schema.js"

export { requireAuthMiddleware, requireRoleMiddleware, requireScopeMiddleware } from "./stages/guardMiddlewares.js"
export { rateLimit } from "./middleware/rateLimit.js"
export type { RateLimitOptions } from "./middleware/rateLimit.js"
export { apiKeyAuth } from "./auth/apiKeyAuth.js"
export type { ApiKeyAuthOptions } from "./auth/apiKeyAuth.js"
export { jwtAuth } from "./auth/jwtAuth.js"
export type { ClaimReader, JwtAuthContext, JwtAuthOptions } from "./auth/jwtAuth.js"

export { Authenticator, AuthService } from "./services/AuthService.js"
export type { AuthenticatorService, AuthServiceShape } from "./services/AuthService.js"
export { Pipeline } from "./services/Pipeline.js"
export type { PipelineService } from "./services/Pipeline.js"
export { QueryLogger } from "./services/QueryLogger.js"
export type { RequestMeter, ServeQueryLogger } from "./stages/events.js"
export { RateLimitStore } from "./services/RateLimitStore.js"
export type { RateLimitStoreService } from "./services/RateLimitStore.js"
export { TenantIsolation, TenantService } from "./services/TenantService.js"
export type { TenantIsolationService, TenantServiceShape } from "./services/TenantService.js"
export { Metrics } from "./metrics/Metrics.js"
export type { MetricsLayerOptions } from "./metrics/Metrics.js"
export type { MetricsScrape, MetricsService } from "./metrics/service.js"
export type { RecordingMetrics } from "./metrics/recording.js"
export { defaultServicesLayer, pipelineLayer } from "./pipeline/serveLayer.js"
export { makeMemoryRateLimitStore, MemoryRateLimitStore, memoryRateLimitStoreLayer } from "./services/memoryRateLimitStore.js"
export type { MemoryRateLimitStoreOptions } from "./services/memoryRateLimitStore.js"
export type { WindowCount, WindowCountingStore } from "./services/windowCount.js"

export { ResultCacheStore } from "./cache/ResultCacheStore.js"
export { ResultCacheNamespace } from "./cache/cacheNamespace.js"
export { StoredResult } from "./stages/storedResult.js"
export type { ResultCacheFilter, ResultCacheStoreService, ResultCacheStoreStats } from "./cache/ResultCacheStore.js"
export type { ResultCacheKey } from "./stages/storedResult.js"
export type { ResultCacheControl, ResultCacheStats } from "./cache/resultCache.js"
export { makeMemoryResultCacheStore, memoryResultCacheStore } from "./cache/memoryResultCacheStore.js"
export type { MemoryResultCacheStore, MemoryResultCacheStoreOptions } from "./cache/memoryResultCacheStore.js"
export { makeTestResultCacheStore, testResultCacheStore } from "./cache/testResultCacheStore.js"
export type { TestResultCacheStore } from "./cache/testResultCacheStore.js"

export type { NodeServerOptions, RunningServer } from "./server/serverOptions.js"
export { createFetchHandler } from "./adapters/fetch.js"
export type { FetchHandler, FetchHandlerOptions } from "./adapters/fetch.js"
export { createPlatformEdgeHandler } from "./adapters/platform.js"
export type { PlatformEdgeHandler } from "./adapters/platform.js"
export { toHttpApp } from "./adapters/effect.js"
export type { HttpAppOptions } from "./adapters/effect.js"

export { dataset } from "./datasets/dataset.js"
export type { Dataset, ToSqlOptions } from "./datasets/dataset.js"
export type { AllowUnscoped, DatasetConfig, DatasetModel, Dimensions, Measures } from "./datasets/model.js"
export { dimension } from "./datasets/dimension.js"
export type { Dimension, DimensionKind, DimensionOptions, Grain } from "./datasets/dimension.js"
export { measure } from "./datasets/measure.js"
export type { Aggregation, ColumnMeasure, Measure, MeasureOptions, RatioMeasure } from "./datasets/measure.js"
export type { FilterOp } from "./datasets/filterOps.js"
export type {
  DatasetAnswer,
  DatasetField,
  DatasetFilter,
  DatasetOrder,
  DatasetQuery,
  DatasetResult,
  DatasetRow,
  DimensionField,
  MeasureField
} from "./datasets/query.js"
export type { SqlDialect, SqlExecutor, SqlParam, SqlStatement } from "./datasets/executor.js"
export type { CatalogueDimension, CatalogueMeasure, DatasetCatalogueEntry } from "./datasets/catalogue.js"
export type { Page } from "./pagination/page.js"
