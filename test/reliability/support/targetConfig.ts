/** What the test and the server process under test (targetServer.ts) agree on. */
import type { AuthFailureLimitOptions } from "queryserve"
import { type AnalyticsCaller, DEMO_API_KEYS } from "../../../examples/analytics/api.js"
import { TENANT_IDS, type TenantId } from "../../../examples/analytics/dataset.js"

export interface TargetConfig {
  /** Order rows of the demo dataset. */
  readonly rows: number
  /** The demo's database: DuckDB (default) or chDB, ClickHouse in the server's process. */
  readonly engine?: "duckdb" | "clickhouse"
  /** Largest request body, bytes. */
  readonly bodyLimit: number
  /** Requests per tenant and second before 429. */
  readonly rateLimitPerSecond: number
  /** requestTimeout of the fault API, ms (its `hang` endpoint waits forever). */
  readonly faultRequestTimeout: number
  /** Serve the demo with its result cache on (in memory). */
  readonly resultCache?: boolean
  /** A Redis server for the fault API's rate limits; without it they count in memory. */
  readonly redisUrl?: string
  /** Passed to `start()`; undefined keeps the default. */
  readonly handleUncaughtErrors?: boolean
  /** A file that gets the `x-request-id` of every request node:http hands to the servers, one per line, as it arrives. */
  readonly admittedLog?: string
}

export const JWT_SECRET = "reliability-tests-hs256-secret-of-32-bytes!"

/** One API key per tenant of the dataset (the demo's two, and one for the third), plus the demo's admin key. */
export const TENANT_KEYS: Readonly<Record<TenantId, string>> = {
  acme: "demo-acme-key",
  globex: "demo-globex-key",
  initech: "reliability-initech-key"
}

export const ADMIN_KEY = "demo-admin-key"

/**
 * The demo API's key-guessing limit. It trusts `X-Forwarded-For`, so a test can send each caller from
 * an address of its own (the tenant matrix does); requests without the header all count as loopback.
 */
export const AUTH_FAILURE_LIMIT: AuthFailureLimitOptions = { max: 5, windowMs: 60_000, trustProxy: true }

export const API_KEYS: Readonly<Record<string, AnalyticsCaller>> = {
  ...DEMO_API_KEYS,
  [TENANT_KEYS.initech]: { name: "Initech analyst", tenantId: "initech", roles: ["analyst"] }
}

export { TENANT_IDS, type TenantId }
