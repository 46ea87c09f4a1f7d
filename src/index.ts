/**
 * queryserve: named queries as typed, multi-tenant HTTP endpoints.
 * This module is the promise facade; the Effect services and layers are exported for Effect users.
 * It is the Node entry: the web build (index.web.ts, which runs anywhere) plus what needs Node's
 * modules: `builder.start()` on node:http, the Node handlers, `serveDev`, the Redis stores, metrics
 * with prom-client, and node:crypto's SHA-256.
 */
import { startNodeServer } from "./server/nodeServer.js"
import { nodeSha256 } from "./adapters/nodeSha256.js"
import { provideSha256 } from "./domain/digest.js"
import { provideServerStart } from "./facade/serverStart.js"
import { provideMetricsBackend } from "./metrics/load.js"

provideServerStart(startNodeServer)
provideSha256(nodeSha256)
provideMetricsBackend(() => import("./metrics/prom.js"))

export * from "./index.web.js"

export { createNodeHandler } from "./adapters/node.js"
export type { NodeHandlerOptions, NodeListener } from "./adapters/node.js"
export { startNodeServer }
export { createPlatformNodeHandler } from "./adapters/platformNode.js"
export { serveDev } from "./server/serveDev.js"
export type { DevServable, ServeDevOptions } from "./server/serveDev.js"
export { makeRedisRateLimitStore, redisRateLimitStoreLayer } from "./layers/redisRateLimitStore.js"
export type {
  RedisRateLimitClient,
  RedisRateLimitStoreLayerOptions,
  RedisRateLimitStoreOptions
} from "./layers/redisRateLimitStore.js"
export { makeRedisResultCacheStore, redisResultCacheStore } from "./cache/redisResultCacheStore.js"
export type {
  RedisResultCacheClient,
  RedisResultCacheConnection,
  RedisResultCacheStoreOptions
} from "./cache/redisResultCacheStore.js"
