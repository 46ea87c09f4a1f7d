/**
 * The `export` section's shared parts: one tenant's orders of a full year as CSV from DuckDB
 * (BENCH_EXPORT_ROWS order rows, default 800,000: acme's share is about 400,000), and the record of
 * when each export's database query ended, which both servers answer at EXPORT_END_PATH.
 */
import { createDemoDatabase } from "../../examples/analytics/dataset.js";
import { ConnectionPool } from "../../examples/analytics/duckdb.js";
import { DEMO_KEY, DEMO_KEY_HEADER } from "./demo.js";
import { envNumber } from "./env.js";

export const EXPORT_RANGE = { from: "2025-01-01", to: "2025-12-31" } as const;
export const EXPORT_PATH = `/api/analytics/ordersExport.csv?from=${EXPORT_RANGE.from}&to=${EXPORT_RANGE.to}`;
/** A short range, for the servers' self-checks. */
export const EXPORT_CHECK_PATH = "/api/analytics/ordersExport.csv?from=2025-03-01&to=2025-03-02";
export const EXPORT_HEADERS: Readonly<Record<string, string>> = { [DEMO_KEY_HEADER]: DEMO_KEY };
/** GET: `{ started, ended, complete }` of the last export, in ms since the epoch (fractional). */
export const EXPORT_END_PATH = "/bench/export-end";
export const CSV_HEADER = "order_id,day,region,product,quantity,amount";

/** Milliseconds since the epoch with performance.now()'s precision: comparable across the bench's processes. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export interface ExportEnd {
  readonly started: number;
  readonly ended: number;
  /** Every row was read, rather than the export ended early. */
  readonly complete: boolean;
}

/** The last export's record, kept by the server that ran it. */
export const exportEnds = () => {
  let last: ExportEnd | undefined;
  return {
    record: (end: ExportEnd): void => void (last = end),
    json: (): string => JSON.stringify(last ?? null),
  };
};

/** The demo database (BENCH_EXPORT_ROWS orders) and a pool of four connections, as `npm start` opens them. */
export const openExportPool = async () => {
  const demo = await createDemoDatabase({ rows: Math.round(envNumber("BENCH_EXPORT_ROWS", 800_000)), log: () => {} });
  const pool = await ConnectionPool.open(demo.instance, 4);
  return {
    pool,
    close: async (): Promise<void> => {
      pool.closeSync();
      await demo.close();
    },
  };
};

/** Throws unless the server answers the check range as CSV with the export's header, and refuses a missing key. */
export const verifyExportServer = async (baseUrl: string): Promise<void> => {
  const answer = await fetch(`${baseUrl}${EXPORT_CHECK_PATH}`, { headers: EXPORT_HEADERS });
  const text = await answer.text();
  if (answer.status !== 200 || !text.startsWith(`${CSV_HEADER}\r\n`) || text.split("\r\n").length < 10) {
    throw new Error(`GET ${EXPORT_CHECK_PATH} answered ${answer.status}: ${text.slice(0, 120)}`);
  }
  const refused = await fetch(`${baseUrl}${EXPORT_CHECK_PATH}`);
  await refused.arrayBuffer();
  if (refused.status !== 401) throw new Error(`GET ${EXPORT_CHECK_PATH} without a key answered ${refused.status}, not 401`);
};
