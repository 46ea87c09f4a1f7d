/**
 * Checking and compiling a dataset query, without a database: `ordersDataset.toSql` (the tenant
 * scope, the query checked against the model, the DuckDB statement written) in a loop, for the
 * bench's question and for a larger one (three dimensions, a grain, three filters, an order).
 * Run by bench/run.ts in its own process (section `datasets`); prints `result <json>` with the
 * CPU µs per query, the median of ROUNDS rounds, or `fail <reason>`.
 */
import type { Dataset } from "queryserve";
import { ordersDataset } from "../../examples/analytics/ordersDataset.js";
import { QUESTION } from "../lib/datasetBench.js";
import { median } from "../lib/report.js";

const ROUNDS = 5;
const PER_ROUND = 10_000;

const QUERIES = {
  revenueByRegion: QUESTION,
  larger: {
    dimensions: ["region", "day.month", "product_id"],
    measures: ["revenue", "orders", "avgOrder"],
    filters: [
      { field: "day", op: "between", value: ["2025-01-01", "2025-06-30"] },
      { field: "region", op: "in", value: ["emea", "na"] },
      { field: "revenue", op: "gt", value: 100 },
    ],
    orderBy: [{ field: "revenue", direction: "desc" }],
    limit: 500,
  },
} as const;

/** Widened: the loop hands it queries as plain data, as a request body would. */
const orders: Dataset = ordersDataset;

const emit = (line: string): void => void process.stdout.write(`${line}\n`);

/** CPU µs per `toSql` call of `query`, one round. */
const round = (query: unknown): number => {
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) orders.toSql(query, { dialect: "duckdb", tenantId: "acme" });
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
};

try {
  const result: Record<string, { usPerQuery: number; best: number; sqlChars: number }> = {};
  for (const [name, query] of Object.entries(QUERIES)) {
    round(query); // warm-up: the optimiser sees the loop before it is timed
    const rounds = Array.from({ length: ROUNDS }, () => round(query));
    result[name] = { usPerQuery: median(rounds), best: Math.min(...rounds), sqlChars: orders.toSql(query, { dialect: "duckdb", tenantId: "acme" }).sql.length };
  }
  emit(`result ${JSON.stringify({ rounds: ROUNDS, perRound: PER_ROUND, queries: result })}`);
} catch (error) {
  emit(`fail ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")}`);
  process.exitCode = 1;
}
