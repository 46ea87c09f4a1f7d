/**
 * The question the `datasets` section asks: revenue by region for the acme tenant, over the demo's
 * DuckDB database (BENCH_DEMO_ROWS order rows). The queryserve dataset answers it at DATASET_PATH;
 * the hand-written baselines run HAND_WRITTEN_SQL, the statement a developer would write for it,
 * and answer the same `{ data, page }` body.
 */
import type { Row, SqlDriver } from "../../examples/analytics/sql.js";
import { type ServeHandler, startNodeServer } from "queryserve";
import { DEMO_KEY, DEMO_KEY_HEADER } from "./demo.js";

export const DATASET_PATH = "/api/analytics/datasets/orders";
/** The hand-written queryserve endpoint answering the same question (servers/dataset-endpoint.ts). */
export const ENDPOINT_PATH = "/api/analytics/revenueByRegion";
export const QUESTION = { dimensions: ["region"], measures: ["revenue"] } as const;
export const QUESTION_BODY = JSON.stringify(QUESTION);
export const DATASET_HEADERS: Readonly<Record<string, string>> = { [DEMO_KEY_HEADER]: DEMO_KEY };

/** A dataset's default page: 100 rows, the 101st only says there are more. */
const PAGE_LIMIT = 100;
const HAND_WRITTEN_SQL = `SELECT region, sum(amount) AS revenue FROM orders WHERE tenant_id = $1 GROUP BY region ORDER BY region LIMIT ${PAGE_LIMIT + 1}`;

export interface RevenueByRegionAnswer {
  readonly data: ReadonlyArray<Row>;
  readonly page: { readonly limit: number; readonly nextCursor: null; readonly hasMore: boolean };
}

/** The question answered by hand: one statement, one page (the demo has a handful of regions). */
export const revenueByRegion = async (driver: SqlDriver, tenantId: string, signal?: AbortSignal): Promise<RevenueByRegionAnswer> => {
  const rows = await driver.execute({ sql: HAND_WRITTEN_SQL, params: [tenantId], checks: [] }, signal);
  return { data: rows.slice(0, PAGE_LIMIT), page: { limit: PAGE_LIMIT, nextCursor: null, hasMore: rows.length > PAGE_LIMIT } };
};

/** True for exactly the bench's question (no other keys, the same fields): what the hand-written baselines accept. */
export const isQuestion = (body: unknown): boolean =>
  typeof body === "object" &&
  body !== null &&
  Object.keys(body).length === 2 &&
  JSON.stringify(Reflect.get(body, "dimensions")) === JSON.stringify(QUESTION.dimensions) &&
  JSON.stringify(Reflect.get(body, "measures")) === JSON.stringify(QUESTION.measures);

/** Throws unless the server at `path` answers the question with rows, and refuses a missing key and an unknown field. */
export const verifyDatasetServer =
  (path: string) =>
  async (baseUrl: string): Promise<void> => {
    const json = { "content-type": "application/json" };
    const probes: ReadonlyArray<readonly [string, Record<string, string>, number]> = [
      [QUESTION_BODY, { ...json, ...DATASET_HEADERS }, 200],
      [QUESTION_BODY, json, 401],
      [JSON.stringify({ dimensions: ["planet"], measures: ["revenue"] }), { ...json, ...DATASET_HEADERS }, 400],
    ];
    for (const [body, headers, status] of probes) {
      const response = await fetch(`${baseUrl}${path}`, { method: "POST", headers, body });
      const text = await response.text();
      if (response.status !== status) throw new Error(`POST ${path} ${body} answered ${response.status}, not ${status}: ${text.slice(0, 120)}`);
      if (status === 200 && !text.startsWith('{"data":[{"region":')) throw new Error(`POST ${path}: no rows in ${text.slice(0, 120)}`);
    }
  };

/** Serves `api` on node:http; stopping stops the server, then the API, then its database pool. */
export const serveWithPool = async (
  api: { readonly handler: ServeHandler; dispose(): Promise<void> },
  closePool: () => Promise<void>,
  port: number,
  hostname: string,
): Promise<{ readonly stop: () => Promise<void> }> => {
  const server = await startNodeServer(api.handler, { port, hostname, handleSignals: false });
  return {
    stop: async () => {
      await server.stop();
      await api.dispose();
      await closePool();
    },
  };
};
