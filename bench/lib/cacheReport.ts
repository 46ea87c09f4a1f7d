/** The result-cache section of the report: tasks/cacheThroughput.ts, cacheStampede.ts and cacheMemory.ts. */
import type { TaskResult } from "./report.js";

export interface CacheResults {
  throughput?: TaskResult;
  stampede?: TaskResult;
  memory?: TaskResult;
}

interface ThroughputRow {
  readonly name: string;
  readonly label: string;
  readonly rps: number;
  readonly usPerReq: number;
  readonly p50: number;
  readonly p99: number;
  readonly bad: number;
}

interface StampedeRun {
  readonly requests: number;
  readonly handlerRuns: number;
  readonly perProcess: ReadonlyArray<number>;
  readonly hits: number;
  readonly ms: number;
}

const fixed = (value: unknown, digits: number): string => (typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "–");
const mib = (bytes: unknown): string => (typeof bytes === "number" ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : "–");
const failed = (title: string, task: TaskResult): string => `- ${title}: ${task.status}${task.reason !== undefined ? ` — ${task.reason}` : ""}`;

const throughputLines = (task: TaskResult, table: (head: string[], rows: string[][]) => string): string[] => {
  const data = task.data;
  if (task.status !== "ok" || data === undefined) return [failed("throughput", task)];
  const rows = data["rows"] as ReadonlyArray<ThroughputRow>;
  const base = rows.find((row) => row.name === "raw-memo");
  const head = ["server", "req/s", "× raw (Map)", "server CPU µs/req", "CPU × raw (Map)", "p50 ms", "p99 ms", "notes"];
  const body = rows.map((row) => [
    row.label,
    Math.round(row.rps).toLocaleString("en-US"),
    `${fixed(row.rps / (base?.rps ?? Number.NaN), 2)}×`,
    Math.round(row.usPerReq).toLocaleString("en-US"),
    `${fixed(row.usPerReq / (base?.usPerReq ?? Number.NaN), 2)}×`,
    String(row.p50),
    String(row.p99),
    row.bad > 0 ? `${row.bad} non-2xx/errors/timeouts` : "",
  ]);
  return [
    `Endpoint: \`${String(data["endpoint"])}\` (acme's key), the demo over DuckDB (BENCH_DEMO_ROWS order rows, default 200,000).`,
    "",
    table(head, body),
    "",
    `- cached vs raw node:http keeping its answers in a Map: ${fixed(data["cachedVsRawMemo"], 2)}× req/s (goal ≥ 0.8×)`,
    `- cached vs raw node:http running the query each time: ${fixed(data["cachedVsRawQuery"], 1)}×; cached vs uncached queryserve: ${fixed(data["cachedVsUncached"], 1)}×`,
  ];
};

const stampedeLines = (task: TaskResult): string[] => {
  const data = task.data;
  if (task.status !== "ok" || data === undefined) return [failed("stampede", task)];
  const one = data["oneProcess"] as StampedeRun;
  const two = data["twoProcessesRedis"] as StampedeRun | { readonly skipped: string };
  const pair = "skipped" in two
    ? `two processes sharing Redis: skipped (${two.skipped})`
    : `two processes sharing one Redis store (${two.requests / two.perProcess.length} each): ${two.handlerRuns} runs (${two.perProcess.join(" + ")}), ${two.hits} hits, ${Math.round(two.ms)} ms`;
  return [
    `- Stampede, ${String(data["requests"])} concurrent identical requests for a cold entry: the handler ran ${one.handlerRuns} time(s) in one process (goal: exactly 1), ${one.hits} hits, ${Math.round(one.ms)} ms; ${pair}.`,
  ];
};

const memoryLines = (task: TaskResult): string[] => {
  const data = task.data;
  if (task.status !== "ok" || data === undefined) return [failed("memory store", task)];
  return [
    `- Memory store, ${Number(data["keys"]).toLocaleString("en-US")} distinct keys (${mib(data["bytesOfResults"])} of results) into maxBytes ${mib(data["maxBytes"])}: ` +
      `${Number(data["entries"]).toLocaleString("en-US")} entries kept (${mib(data["storeBytes"])} counted), RSS growth after GC ${mib(data["rssGrowth"])} = ` +
      `${fixed(data["growthVsMaxBytes"], 2)}× maxBytes (goal ≤ 1.2×), heap growth ${mib(data["heapGrowth"])}, ${fixed(Number(data["msPerInsert"]) * 1000, 0)} µs per request.`,
  ];
};

/** The section's lines; `table` renders the throughput table (text or Markdown). */
export const cacheReportLines = (cache: CacheResults, table: (head: string[], rows: string[][]) => string): string[] => [
  ...(cache.throughput === undefined ? [] : throughputLines(cache.throughput, table)),
  ...(cache.stampede === undefined ? [] : stampedeLines(cache.stampede)),
  ...(cache.memory === undefined ? [] : memoryLines(cache.memory)),
];
