/**
 * The demo endpoint the result-cache bench measures: `revenueByRegion` of the analytics demo over
 * DuckDB, asked by the acme tenant's key. Every demo server (queryserve with and without the
 * cache, raw node:http) builds the same dataset (BENCH_DEMO_ROWS order rows, default 200,000).
 */
import { type AnalyticsCaller, DEMO_API_KEYS } from "../../examples/analytics/api.js";
import { createDemoDatabase } from "../../examples/analytics/dataset.js";
import { ConnectionPool, duckDbDriver } from "../../examples/analytics/duckdb.js";
import { createDb, type Db } from "../../examples/analytics/sql.js";
import { envNumber } from "./env.js";

export const DEMO_PATH = "/api/analytics/revenueByRegion";
export const DEMO_URL_PATH = `${DEMO_PATH}?from=2025-01-01&to=2025-03-31`;
/** Another input, for self-checks that must leave DEMO_URL_PATH cold. */
export const DEMO_CHECK_PATH = `${DEMO_PATH}?from=2025-04-01&to=2025-06-30`;
export const DEMO_KEY_HEADER = "x-api-key";
export const DEMO_KEY = "demo-acme-key";
/** Handler runs and cache answers of a queryserve demo server, as JSON (not an endpoint of the API). */
export const DEMO_STATS_PATH = "/bench/stats";

export const demoKeys: Readonly<Record<string, AnalyticsCaller>> = DEMO_API_KEYS;

export interface DemoDb {
  readonly db: Db;
  close(): Promise<void>;
}

export interface DemoPool {
  readonly pool: ConnectionPool;
  close(): Promise<void>;
}

/** The demo dataset in DuckDB (BENCH_DEMO_ROWS order rows), four connections, as `npm start` serves it. */
export const openDemoPool = async (): Promise<DemoPool> => {
  const demo = await createDemoDatabase({ rows: Math.round(envNumber("BENCH_DEMO_ROWS", 200_000)), log: () => {} });
  const pool = await ConnectionPool.open(demo.instance, 4);
  return {
    pool,
    close: async () => {
      pool.closeSync();
      await demo.close();
    },
  };
};

/** The demo's query builder over that pool. */
export const openDemoDb = async (): Promise<DemoDb> => {
  const { pool, close } = await openDemoPool();
  return { db: createDb(duckDbDriver(pool)), close };
};

/** `db` with every table filtered to one tenant, as queryserve's auto-inject does. */
export const tenantDb = (db: Db, tenantId: string): Db => ({
  ...db,
  table: (name) => db.table(name).where("tenant_id", "eq", tenantId),
});

/** Throws unless the server answers the check input with rows, and refuses a missing key and a bad date. */
export const verifyDemoServer = async (baseUrl: string): Promise<void> => {
  const probes: ReadonlyArray<readonly [string, Record<string, string>, number]> = [
    [DEMO_CHECK_PATH, { [DEMO_KEY_HEADER]: DEMO_KEY }, 200],
    [DEMO_CHECK_PATH, {}, 401],
    [`${DEMO_PATH}?from=2025-13-45&to=2025-03-31`, { [DEMO_KEY_HEADER]: DEMO_KEY }, 400],
  ];
  for (const [path, headers, status] of probes) {
    const response = await fetch(`${baseUrl}${path}`, { headers });
    const text = await response.text();
    if (response.status !== status) throw new Error(`GET ${path} answered ${response.status}, not ${status}: ${text.slice(0, 120)}`);
    if (status === 200 && !(Array.isArray(JSON.parse(text)) && text.includes('"region"'))) throw new Error(`GET ${path}: no rows in ${text.slice(0, 120)}`);
  }
};
