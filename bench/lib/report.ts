/**
 * Result types, summaries, the console table, bench/results.json and
 * bench/RESULTS.md (keeping the hand-written "What each change bought" section).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mcpLines } from "../tasks/mcp.js";
import { datasetLines } from "../tasks/datasets.js";
import { exportLines } from "../tasks/export.js";
import { pairedLines } from "../tasks/paired.js";
import { type CacheResults, cacheReportLines } from "./cacheReport.js";
import type { RunResult } from "./load.js";

export interface Meta {
  readonly date: string;
  readonly node: string;
  readonly cpuModel: string;
  readonly cores: number;
  readonly os: string;
  readonly commit: string;
  readonly connections: number;
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly rounds: number;
  readonly only: string | null;
  readonly backgroundCores: number[];
  totalSec: number;
}

export interface PeerResult {
  readonly name: string;
  readonly label: string;
  status: "ok" | "skipped" | "failed";
  reason?: string;
  readonly runs: RunResult[];
  warmup?: RunResult;
}

export interface PeerSummary {
  readonly name: string;
  readonly label: string;
  readonly status: "ok" | "skipped" | "failed";
  readonly reason?: string;
  readonly rps: number;
  readonly rpsMin: number;
  readonly rpsMax: number;
  readonly ratio: number;
  readonly usPerReq: number;
  readonly costRatio: number;
  readonly p50: number;
  readonly p99: number;
  readonly serverCores: number;
  readonly loadgenCores: number;
  readonly machineCores: number;
  readonly notes: string[];
  readonly runs: RunResult[];
}

export interface GroupResult {
  readonly id: string;
  readonly title: string;
  readonly endpoint: string;
  readonly baseline: string;
  readonly peers: PeerSummary[];
  readonly notes: string[];
}

export interface RssResult {
  readonly name: string;
  readonly label: string;
  readonly status: "ok" | "skipped" | "failed";
  readonly reason?: string;
  readonly requests?: number;
  readonly non2xx?: number;
  readonly rps?: number;
  readonly beforeMiB?: number;
  readonly afterMiB?: number;
  readonly afterIdleMiB?: number;
}

export interface TaskResult {
  readonly status: "ok" | "skipped" | "failed";
  readonly reason?: string;
  readonly data?: Record<string, unknown>;
}

export interface ColdStartResult {
  readonly target: string;
  readonly status: "ok" | "skipped" | "failed";
  readonly reason?: string;
  /** wall ms from spawn to the first answered request (median) */
  readonly wallMs?: number;
  /** RSS in MiB right after the first answer (median) */
  readonly rssMiB?: number;
  readonly runs: Record<string, unknown>[];
}

export interface Results {
  readonly meta: Meta;
  readonly groups: GroupResult[];
  readonly rss: RssResult[];
  openapi?: TaskResult;
  readonly coldStart: ColdStartResult[];
  /** examples/worker bundled for workerd: sizes in bytes */
  worker?: TaskResult;
  mcp?: TaskResult;
  /** the issue goals against raw, as medians of back-to-back pairs */
  goals?: TaskResult;
  /** a dataset query against the same question answered by hand, in pairs; compiling a query */
  datasets?: TaskResult;
  /** one tenant's orders exported as CSV, queryserve against node:http streaming by hand */
  export?: TaskResult;
  cache?: CacheResults;
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const hi = sorted[mid] ?? Number.NaN;
  return sorted.length % 2 === 1 ? hi : ((sorted[mid - 1] ?? hi) + hi) / 2;
};

export const summarize = (peer: PeerResult, baseline: { rps: number; usPerReq: number }, cores: number): PeerSummary => {
  const rpsList = peer.runs.map((r) => r.rps);
  const rps = median(rpsList);
  const loadgenCores = median(peer.runs.map((r) => r.loadgenCores));
  const serverCores = median(peer.runs.map((r) => r.serverCores));
  const machineCores = median(peer.runs.map((r) => r.machineCores));
  const usPerReq = median(peer.runs.map((r) => r.serverUsPerReq));
  const notes: string[] = [];
  const bad = peer.runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
  if (bad > 0) notes.push(`${bad} non-2xx/errors/timeouts during measured runs`);
  if (peer.runs.length > 0 && loadgenCores >= 0.9) {
    notes.push(`load generator at ${loadgenCores.toFixed(2)} cores: req/s is a floor`);
  } else if (peer.runs.length > 0 && machineCores >= cores * 0.9) {
    notes.push(`machine at ${machineCores.toFixed(2)} of ${cores} cores: CPU-bound box, not only the server`);
  }
  const base = {
    name: peer.name,
    label: peer.label,
    status: peer.status,
    rps,
    rpsMin: Math.min(...rpsList),
    rpsMax: Math.max(...rpsList),
    ratio: rps / baseline.rps,
    usPerReq,
    costRatio: usPerReq / baseline.usPerReq,
    p50: median(peer.runs.map((r) => r.p50)),
    p99: median(peer.runs.map((r) => r.p99)),
    serverCores,
    loadgenCores,
    machineCores,
    notes,
    runs: peer.runs,
  };
  return peer.reason === undefined ? base : { ...base, reason: peer.reason };
};

// ---------------------------------------------------------------- formatting

const num = (value: number | undefined, digits = 0): string =>
  value === undefined || !Number.isFinite(value) ? "–" : value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

const ms = (value: number | undefined): string => (value === undefined || !Number.isFinite(value) ? "–" : value < 10 ? value.toFixed(1) : value.toFixed(0));

const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "–");

const groupRows = (group: GroupResult): string[][] =>
  group.peers.map((p) =>
    p.status === "ok"
      ? [
          p.label,
          num(p.rps),
          ratio(p.ratio),
          num(p.usPerReq),
          ratio(p.costRatio),
          ms(p.p50),
          ms(p.p99),
          `${num(p.rpsMin)}–${num(p.rpsMax)}`,
          p.serverCores.toFixed(2),
          p.loadgenCores.toFixed(2),
          p.machineCores.toFixed(2),
          p.notes.join("; "),
        ]
      : [p.label, p.status, "", "", "", "", "", "", "", "", "", p.reason ?? ""],
  );

const GROUP_HEAD = ["server", "req/s", "× raw", "server CPU µs/req", "CPU × raw", "p50 ms", "p99 ms", "req/s range", "server cores", "loadgen cores", "machine cores", "notes"];

/** Plain-text table for the terminal. */
export const textTable = (head: string[], rows: string[][]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min((r[i] ?? "").length, i === head.length - 1 ? 80 : 40))));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => {
        const w = widths[i] ?? 0;
        return i === 0 || i === cells.length - 1 ? c.padEnd(w) : c.padStart(w);
      })
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
};

const mdTable = (head: string[], rows: string[][]): string =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map((_, i) => (i === 0 || i === head.length - 1 ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`),
  ].join("\n");

export const consoleReport = (results: Results): string => {
  const parts: string[] = [];
  for (const group of results.groups) {
    parts.push(`\n${group.title} — ${group.endpoint}`, textTable(GROUP_HEAD, groupRows(group)));
    for (const note of group.notes) parts.push(`  note: ${note}`);
  }
  if (results.rss.length > 0) parts.push("\nRSS", textTable(RSS_HEAD, rssRows(results.rss)));
  if (results.openapi !== undefined) parts.push("\nOpenAPI (1,000 endpoints)", openapiLines(results.openapi).join("\n"));
  if (results.coldStart.length > 0) parts.push("\nCold start", textTable(COLD_HEAD, coldRows(results.coldStart)));
  if (results.worker !== undefined) parts.push("\nWorker bundle (examples/worker)", workerLines(results.worker).join("\n"));
  if (results.mcp !== undefined) parts.push("\nMCP tools/call vs plain HTTP", mcpLines(results.mcp).join("\n"));
  if (results.goals !== undefined) parts.push("\nGoals in back-to-back pairs", pairedLines(results.goals).join("\n"));
  if (results.cache !== undefined) parts.push("\nResult cache", ...cacheReportLines(results.cache, textTable));
  if (results.datasets !== undefined) parts.push("\nDatasets", datasetLines(results.datasets).join("\n"));
  if (results.export !== undefined) parts.push("\nExport (CSV, streamed)", exportLines(results.export).join("\n"));
  return parts.join("\n");
};

const RSS_HEAD = ["server", "requests", "req/s", "RSS before MiB", "RSS after MiB", "after 2 s idle MiB", "growth MiB", "notes"];
const rssRows = (list: RssResult[]): string[][] =>
  list.map((r) =>
    r.status === "ok"
      ? [
          r.label,
          num(r.requests),
          num(r.rps),
          num(r.beforeMiB, 1),
          num(r.afterMiB, 1),
          num(r.afterIdleMiB, 1),
          num((r.afterIdleMiB ?? Number.NaN) - (r.beforeMiB ?? Number.NaN), 1),
          r.non2xx !== undefined && r.non2xx > 0 ? `${r.non2xx} non-2xx` : "",
        ]
      : [r.label, r.status, "", "", "", "", "", r.reason ?? ""],
  );

const COLD_HEAD = [
  "target",
  "spawn → first answer ms (median)",
  "× raw",
  "RSS after first answer MiB",
  "× raw",
  "inside the process: boot / import / define 100 / listen / first request ms",
  "notes",
];
const coldRows = (list: ColdStartResult[]): string[][] => {
  const raw = list.find((c) => c.target === "raw" && c.status === "ok");
  return list.map((c) => {
    if (c.status !== "ok") return [c.target, c.status, "", "", "", "", c.reason ?? ""];
    const pick = (key: string): number => median(c.runs.map((r) => Number(r[key])));
    const inside = ["bootMs", "importMs", "defineMs", "listenMs", "firstRequestMs"].map((k) => ms(pick(k))).join(" / ");
    const versusRaw = (value: number | undefined, base: number | undefined): string =>
      raw === undefined || value === undefined || base === undefined ? "–" : ratio(value / base);
    return [c.target, ms(c.wallMs), versusRaw(c.wallMs, raw?.wallMs), num(c.rssMiB, 1), versusRaw(c.rssMiB, raw?.rssMiB), inside, `${c.runs.length} runs`];
  });
};

const kib = (bytes: unknown): string => (typeof bytes === "number" ? `${(bytes / 1024).toFixed(1)} KiB` : "–");

const workerLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`${task.status}: ${task.reason ?? ""}`];
  const d = task.data;
  return [
    `- loaded when the Worker starts (entry + static chunks): ${kib(d["startupBytes"])} minified, ${kib(d["startupGzipBytes"])} gzip (goal: under 1 MiB minified)`,
    `- all ${String(d["modules"])} modules: ${kib(d["totalBytes"])}, of which Scalar's script for the docs page ${kib(d["docsChunkBytes"])} (a chunk loaded on first use)`,
  ];
};

const openapiLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`${task.status}: ${task.reason ?? ""}`];
  const d = task.data;
  const n = (key: string): string => (typeof d[key] === "number" ? ms(Number(d[key])) : "–");
  const lines = [`- defineServe with ${String(d["endpoints"])} queries: ${n("defineMs")} ms`];
  if (d["directFirstMs"] !== undefined) {
    lines.push(
      `- buildOpenApiDocument: first call ${n("directFirstMs")} ms, then median ${n("directMedianMs")} ms (${String(d["directPaths"])} paths)`,
    );
  } else lines.push(`- buildOpenApiDocument: skipped (${String(d["directSkipped"])})`);
  if (d["httpFirstMs"] !== undefined) {
    lines.push(
      `- GET /api/analytics/openapi.json: first ${n("httpFirstMs")} ms, second ${n("httpSecondMs")} ms (${String(d["httpBytes"])} bytes, ${String(d["httpPaths"])} paths)`,
    );
  } else lines.push(`- GET openapi.json: skipped (${String(d["httpSkipped"])})`);
  return lines;
};

// ---------------------------------------------------------------- files

const CHANGES_HEADING = "## What each change bought";
const CHANGES_PLACEHOLDER = [
  CHANGES_HEADING,
  "",
  "_Filled in by the performance work: one row per change, with the bench figures before and after",
  "(same machine, same `BENCH_DURATION`). The harness keeps this section when it rewrites the file._",
  "",
  "| change | commit | GET full req/s before → after | × raw before → after | notes |",
  "|---|---|---:|---:|---|",
  "",
].join("\n");

/** The existing "What each change bought" section, verbatim, or the placeholder. */
const keptChangesSection = (path: string): string => {
  if (!existsSync(path)) return CHANGES_PLACEHOLDER;
  const text = readFileSync(path, "utf8");
  const start = text.indexOf(CHANGES_HEADING);
  if (start === -1) return CHANGES_PLACEHOLDER;
  const next = text.indexOf("\n## ", start + CHANGES_HEADING.length);
  return `${(next === -1 ? text.slice(start) : text.slice(start, next)).trimEnd()}\n`;
};

export const writeResultFiles = (results: Results, jsonPath: string, mdPath: string): void => {
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  const m = results.meta;
  const out: string[] = [
    "# Benchmark results",
    "",
    "Written by `npm run bench` (bench/run.ts); raw figures in `bench/results.json`.",
    "",
    `- Date: ${m.date}`,
    `- Machine: ${m.cores} cores, ${m.cpuModel}, ${m.os}`,
    `- Node: ${m.node}`,
    `- Commit: ${m.commit}`,
    `- Load: autocannon in the orchestrator process, ${m.connections} connections, pipelining 1, loopback; every server in its own child process.`,
    `- Method: ${m.warmupSec} s warm-up per server, then ${m.rounds} measured run(s) of ${m.durationSec} s per server, interleaved`,
    "  (round 1 in list order, round 2 reversed, …) so machine drift hits every server alike. Figures are medians over rounds;",
    "  × raw is req/s divided by raw node:http's req/s in the same table. \"server cores\" / \"loadgen cores\" are the CPU the",
    "  server's process tree / autocannon used during the measured runs (1.00 = one full core); \"machine cores\" is all busy CPU",
    "  of the box (adds kernel loopback networking and anything else running). When the load generator nears a full core, or",
    "  the machine nears all its cores, req/s is a floor for the server, not its ceiling. \"server CPU µs/req\" is the server's",
    "  CPU time per answered request; it depends far less on other load than req/s does, so compare it (CPU × raw) when",
    "  the box was busy.",
    `- Background load (busy cores of the whole box with no bench traffic, sampled before each section): ${m.backgroundCores.map((c) => c.toFixed(2)).join(", ")}` +
      (Math.max(...m.backgroundCores) > 0.2 ? " — the box was shared with other work; req/s figures are depressed and noisy." : "."),
    `- Filter: ${m.only ?? "none (all)"}; total bench time ${Math.round(m.totalSec)} s.`,
    "",
  ];
  for (const group of results.groups) {
    out.push(`## ${group.title}`, "", `Endpoint: \`${group.endpoint}\``, "", mdTable(GROUP_HEAD, groupRows(group)), "");
    for (const note of group.notes) out.push(`- ${note}`);
    if (group.notes.length > 0) out.push("");
  }
  if (results.rss.length > 0) {
    out.push("## Memory", "", "RSS of the server process tree before and after the request count below (GET endpoint, 50 connections).", "");
    out.push(mdTable(RSS_HEAD, rssRows(results.rss)), "");
  }
  if (results.openapi !== undefined) {
    out.push("## OpenAPI generation (1,000 endpoints)", "", ...openapiLines(results.openapi), "");
  }
  if (results.coldStart.length > 0) {
    out.push(
      "## Cold start",
      "",
      "A fresh `node` process runs the task compiled to JavaScript: it imports the library (the built dist/), defines 100 queries with an Effect Schema input, listens and answers its first request; then it reads its RSS.",
      "The raw row is the same with node:http. No tsx: its module hooks cost time for every module loaded, which would weigh on the library side only.",
      "\"app bundled\": the same task bundled by esbuild with its packages (queryserve, effect) into one file, as serverless functions are usually deployed.",
      "",
      mdTable(COLD_HEAD, coldRows(results.coldStart)),
      "",
    );
  }
  if (results.worker !== undefined) {
    out.push("## Worker bundle", "", "examples/worker bundled by esbuild for workerd (the web build, minified, code-split).", "", ...workerLines(results.worker), "");
  }
  if (results.mcp !== undefined) {
    out.push("## MCP tools/call vs plain HTTP", "", "The same endpoint of one queryserve full server with `mcp: true`, as a tool call and as its own GET route.", "", ...mcpLines(results.mcp), "");
  }
  if (results.cache !== undefined) out.push("## Result cache", "", ...cacheReportLines(results.cache, mdTable), "");
  if (results.goals !== undefined) {
    out.push(
      "## Goals in back-to-back pairs",
      "",
      "Each round runs the baseline (raw node:http; for metrics, queryserve full with metrics off) and the queryserve setup one right after the other (who goes first alternates); a round's ratio is the setup's req/s over the baseline's in that round, and the figure is the median of the rounds. The tables above compare medians of runs taken up to a minute apart, across which this box's speed can swing by 2×; a pair sees nearly the same box.",
      "",
      ...pairedLines(results.goals),
      "",
    );
  }
  if (results.datasets !== undefined) {
    out.push(
      "## Datasets",
      "",
      "Revenue by region for one tenant (`{\"dimensions\":[\"region\"],\"measures\":[\"revenue\"]}`, POST `/api/analytics/datasets/orders`) over the demo's DuckDB database, in back-to-back pairs as in the goals section: uncached against a hand-written queryserve endpoint running hand-written SQL on a database built the same way (each server builds its own: the same rows, keys, tenant config and pool size), and with the result cache on against raw node:http answering from a Map. Then checking and compiling a query with `toSql`, in one process without a database.",
      "",
      ...datasetLines(results.datasets),
      "",
    );
  }
  if (results.export !== undefined) {
    out.push(
      "## Export",
      "",
      "One tenant's orders of a year as CSV (GET `/api/analytics/ordersExport.csv`) from the demo's DuckDB database: queryserve's streamed `ordersExport` against node:http streaming the same DuckDB result as CSV by hand, one export at a time, alternating. RSS growth is the server's highest reading during an export less its reading before; \"client leaving → query end\" is from a client closing its socket after the first chunk to the server's database stream having closed.",
      "",
      ...exportLines(results.export),
      "",
    );
  }
  out.push(keptChangesSection(mdPath));
  writeFileSync(mdPath, out.join("\n"));
};
