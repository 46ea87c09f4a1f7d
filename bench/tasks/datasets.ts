/**
 * The `datasets` section: a dataset query of the demo (revenue by region for one tenant, over
 * DuckDB) against the same question answered by hand, in back-to-back pairs (tasks/paired.ts):
 * - uncached: the dataset against a hand-written queryserve endpoint running hand-written SQL on a
 *   database built the same way, with the same driver, pool size, keys and tenant config (the overhead of the dataset layer: checking the query,
 *   compiling it, paging the answer);
 * - cached: the dataset with the result cache on against raw node:http answering from a Map;
 * then checking and compiling a query without a database (tasks/datasetCompile.ts, its own process).
 * Env: BENCH_PAIRS, BENCH_PAIR_DURATION as for `goals`; BENCH_DEMO_ROWS for the database.
 */
import { DATASET_HEADERS, DATASET_PATH, ENDPOINT_PATH, QUESTION_BODY } from "../lib/datasetBench.js";
import type { TaskResult } from "../lib/report.js";
import { pairedLines, type PairedOptions, type PairGoal, type PairServer, runPairs } from "./paired.js";

const server = (name: string, file: string, env: Readonly<Record<string, string>> = {}): PairServer => ({
  name,
  file: `servers/${file}.ts`,
  env,
  headers: DATASET_HEADERS,
});

const ENDPOINT = server("dataset-endpoint", "dataset-endpoint");

const GOALS: ReadonlyArray<PairGoal> = [
  {
    id: "dataset-uncached",
    label: "Dataset query, uncached (revenue by region, DuckDB) vs a hand-written endpoint running hand-written SQL",
    server: server("dataset-uncached", "dataset-queryserve", { CACHE: "off" }),
    baseline: ENDPOINT,
    baselineLabel: "the hand-written endpoint's",
    method: "POST",
    path: (side) => (side === ENDPOINT ? ENDPOINT_PATH : DATASET_PATH),
    body: QUESTION_BODY,
    // an overhead of at most 10 %
    minRatio: 0.9,
    // Each answer scans the tenant's orders (milliseconds): two requests per pooled DuckDB connection
    // keep the pool busy without a queue of requests a run's end would cut off.
    load: { connections: 8, minDurationSec: 5 },
  },
  {
    id: "dataset-cached",
    label: "Dataset query, result cache hit vs raw node:http answering from a Map",
    server: server("dataset-cached", "dataset-queryserve", { CACHE: "memory" }),
    baseline: server("dataset-raw", "dataset-raw"),
    baselineLabel: "raw node:http's",
    method: "POST",
    path: DATASET_PATH,
    body: QUESTION_BODY,
    minRatio: 0.8,
  },
];

export interface DatasetsOptions extends PairedOptions {
  /** Runs tasks/datasetCompile.ts in its own process. */
  readonly runCompileTask: () => Promise<TaskResult>;
}

export const runDatasetsTask = async (options: DatasetsOptions): Promise<TaskResult> => {
  // Each server builds the demo database (BENCH_DEMO_ROWS rows) before it is ready.
  const pairs = await runPairs(GOALS, options, 180_000);
  options.log("== Datasets: checking and compiling a query (toSql), in-process loop");
  const compile = await options.runCompileTask();
  options.log(`  ${compile.status}${compile.reason !== undefined ? ` — ${compile.reason}` : ""}${compile.data !== undefined ? ` ${JSON.stringify(compile.data)}` : ""}`);
  return { status: pairs.status, ...(pairs.reason !== undefined ? { reason: pairs.reason } : {}), data: { pairs, compile } };
};

const isTask = (value: unknown): value is TaskResult => typeof value === "object" && value !== null && "status" in value;

const compileLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`- checking and compiling a query: ${task.status}: ${task.reason ?? ""}`];
  const queries = task.data["queries"];
  if (typeof queries !== "object" || queries === null) return [];
  return Object.entries(queries).map(([name, figures]: [string, { usPerQuery?: number; best?: number; sqlChars?: number }]) =>
    `- checking and compiling a query (\`toSql\`, DuckDB), ${name === "larger" ? "three dimensions, three filters, an order" : "revenue by region"}: ` +
    `${(figures.usPerQuery ?? Number.NaN).toFixed(1)} µs CPU per query (best round ${(figures.best ?? Number.NaN).toFixed(1)} µs; ${String(figures.sqlChars)} characters of SQL)`,
  );
};

/** The section's lines for the console and RESULTS.md. */
export const datasetLines = (task: TaskResult): string[] => {
  const pairs = task.data?.["pairs"];
  const compile = task.data?.["compile"];
  return [
    ...(isTask(pairs) ? pairedLines(pairs) : [`${task.status}: ${task.reason ?? ""}`]),
    ...(isTask(compile) ? compileLines(compile) : []),
  ];
};
