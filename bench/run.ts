/**
 * `npm run bench`: every server in its own child process on 127.0.0.1, driven
 * by autocannon from this process, runs interleaved across servers.
 *
 * Env:
 *   BENCH_DURATION=s       seconds per measured run (default 3; whole bench about 3–4 min)
 *   BENCH_ROUNDS=n         measured runs per server (default 2; round 2 in reverse order)
 *   BENCH_WARMUP=s         warm-up seconds per server (default min(2, duration))
 *   BENCH_CONNECTIONS=n    autocannon connections (default 50)
 *   BENCH_RSS_REQUESTS=n   requests for the RSS figure (default 200000)
 *   BENCH_ONLY=a,b         only these: peer names (raw, fastify, hono, hypequery, effect,
 *                          queryserve-bare, queryserve-full, queryserve-full-log, queryserve-full-w2,
 *                          queryserve-full-metrics) and/or sections (get, post, workers, metrics, rss,
 *                          openapi, coldstart, bundle, mcp, cache, goals, datasets, export)
 *   BENCH_PAIRS=n          rounds per goal of the `goals` and `datasets` sections (default 8)
 *   BENCH_PAIR_DURATION=s  seconds per run in the `goals` and `datasets` sections (default 2)
 *   BENCH_EXPORT_ROUNDS=n  exports per server in the `export` section (default 3)
 *   BENCH_EXPORT_ROWS=n    demo order rows the `export` section builds (default 800000: one tenant's year is about 400,000)
 *   BENCH_NO_WRITE=1       print only, leave results.json / RESULTS.md alone
 */
import { execFileSync } from "node:child_process";
import { availableParallelism, cpus, release, type } from "node:os";
import { fileURLToPath } from "node:url";
import { envNumber, logMode, type LogMode } from "./lib/env.js";
import { freePort, killAllNow, machineBusySeconds, type RunMode, spawnBench, stopAll, stopChild, treeRssMiB } from "./lib/children.js";
import { API_KEY, API_KEY_HEADER, GET_URL_PATH, POST_BODY, POST_PATH } from "./lib/fixture.js";
import type { CacheResults } from "./lib/cacheReport.js";
import { runLoad, type RunResult, type Target } from "./lib/load.js";
import { runMcpTask } from "./tasks/mcp.js";
import { runDatasetsTask } from "./tasks/datasets.js";
import { runExportTask } from "./tasks/export.js";
import { runPairedTask } from "./tasks/paired.js";
import {
  consoleReport,
  median,
  summarize,
  writeResultFiles,
  type ColdStartResult,
  type GroupResult,
  type Meta,
  type PeerResult,
  type Results,
  type RssResult,
  type TaskResult,
} from "./lib/report.js";

// ---------------------------------------------------------------- settings

const DURATION = envNumber("BENCH_DURATION", 3);
const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 2));
const WARMUP = envNumber("BENCH_WARMUP", Math.min(2, DURATION));
const CONNECTIONS = Math.round(envNumber("BENCH_CONNECTIONS", 50));
const RSS_REQUESTS = Math.round(envNumber("BENCH_RSS_REQUESTS", 200_000));
const ONLY_RAW = process.env["BENCH_ONLY"]?.trim() ?? "";
const LOG_NOTES: Readonly<Record<LogMode, string>> = {
  stdout: "queryLogging 'json', every line written by console.log to the server's stdout (sent to /dev/null)",
  sink: "queryLogging 'json' with console.log replaced by a byte counter (QS_LOG_MODE=sink: lines built, never written)",
  callback: "a queryLogging callback formatting every event with formatQueryEventJSON and dropping the line (QS_LOG_MODE=callback)",
};
const ONLY = new Set(ONLY_RAW.split(",").map((s) => s.trim()).filter((s) => s !== ""));
const CORES = availableParallelism();

const t0 = performance.now();
const log = (message: string): void => {
  const s = ((performance.now() - t0) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[${s}s] ${message}\n`);
};

// ---------------------------------------------------------------- peers

interface PeerDef {
  readonly name: string;
  readonly label: string;
  readonly file: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly auth?: boolean;
}

const PEERS: Readonly<Record<string, PeerDef>> = {
  raw: { name: "raw", label: "raw node:http", file: "servers/raw.ts" },
  fastify: { name: "fastify", label: "fastify (JSON schema)", file: "servers/fastify.ts" },
  hono: { name: "hono", label: "hono (node-server, validator)", file: "servers/hono.ts" },
  hypequery: { name: "hypequery", label: "@hypequery/serve (zod)", file: "servers/hypequery.ts" },
  effect: { name: "effect", label: "@effect/platform HttpApi", file: "servers/effect.ts" },
  "queryserve-bare": { name: "queryserve-bare", label: "queryserve bare", file: "servers/queryserve-bare.ts" },
  "queryserve-full": { name: "queryserve-full", label: "queryserve full", file: "servers/queryserve-full.ts", auth: true },
  "queryserve-full-log": { name: "queryserve-full-log", label: "queryserve full + JSON log", file: "servers/queryserve-full-log.ts", auth: true },
  "queryserve-full-metrics": { name: "queryserve-full-metrics", label: "queryserve full + metrics", file: "servers/queryserve-full-metrics.ts", auth: true },
  "queryserve-full-w2": {
    name: "queryserve-full-w2",
    label: "queryserve full, workers: 2",
    file: "servers/queryserve-full.ts",
    env: { WORKERS: "2" },
    auth: true,
  },
};

const peer = (name: string): PeerDef => {
  const def = PEERS[name];
  if (def === undefined) throw new Error(`unknown peer ${name}`);
  return def;
};

interface GroupDef {
  readonly id: "get" | "post" | "workers" | "metrics";
  readonly title: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
  readonly peers: readonly string[];
  readonly notes: readonly string[];
  /** A feature's cost: req/s and CPU of `on` against `off`, printed as a note. */
  readonly compare?: { readonly on: string; readonly off: string; readonly goal: string };
}

const GROUPS: readonly GroupDef[] = [
  {
    id: "get",
    title: "GET with one validated query parameter",
    method: "GET",
    path: GET_URL_PATH,
    peers: ["raw", "fastify", "hono", "hypequery", "effect", "queryserve-bare", "queryserve-full", "queryserve-full-log"],
    notes: [
      `queryserve full = one apiKeyAuth strategy + one role guard + schema validation + one global middleware; + JSON log = ${LOG_NOTES[logMode()]}.`,
      "@effect/platform HttpApi encodes its answer through a Struct success schema; the others serialise the handler's object as is.",
    ],
  },
  {
    id: "post",
    title: "POST with a validated JSON body",
    method: "POST",
    path: POST_PATH,
    body: POST_BODY,
    peers: ["raw", "fastify", "queryserve-full"],
    notes: ['Body `{"region":"eu","limit":10}`: region enum + integer 1..100.'],
  },
  {
    id: "workers",
    title: "queryserve workers: 2 vs one process",
    method: "GET",
    path: GET_URL_PATH,
    peers: ["raw", "queryserve-full", "queryserve-full-w2"],
    notes: [
      `autocannon is single-threaded and shares the machine's ${CORES} cores with the server: with 2 server workers the load generator and the server compete for the cores, so the gain of a second worker is capped by the load generator (see the loadgen cores column).`,
    ],
  },
  {
    id: "metrics",
    title: "queryserve metrics on vs off",
    method: "GET",
    path: GET_URL_PATH,
    peers: ["raw", "queryserve-full", "queryserve-full-metrics"],
    notes: ["queryserve full + metrics = the full setup with `metrics: true`: every request counted, timed into the histogram and tracked in flight (prom-client)."],
    compare: { on: "queryserve-full-metrics", off: "queryserve-full", goal: "goal: at most 5 % fewer req/s, judged in the goals section with both servers loaded at the same time" },
  },
];

const sectionOn = (section: string): boolean => ONLY.size === 0 || ONLY.has(section);

const groupPeers = (group: GroupDef): string[] => {
  if (ONLY.size === 0 || ONLY.has(group.id)) return [...group.peers];
  const chosen = group.peers.filter((name) => ONLY.has(name));
  // raw alone is only worth a group when raw is all that was asked for
  if (chosen.every((name) => name === "raw") && [...ONLY].some((name) => name !== "raw")) return [];
  return chosen.includes("raw") ? chosen : ["raw", ...chosen]; // raw is the baseline of every ratio
};

const headersFor = (def: PeerDef, group: GroupDef): Record<string, string> => {
  const headers: Record<string, string> = {};
  if (def.auth === true) headers[API_KEY_HEADER] = API_KEY;
  if (group.body !== undefined) headers["content-type"] = "application/json";
  return headers;
};

// ---------------------------------------------------------------- sections

interface Live {
  readonly def: PeerDef;
  readonly result: PeerResult;
  readonly target: Target;
  readonly child: import("node:child_process").ChildProcess;
}

const fmtRun = (r: RunResult): string =>
  `${Math.round(r.rps).toLocaleString("en-US").padStart(7)} req/s  ${Math.round(r.serverUsPerReq)} µs CPU/req  p50 ${r.p50} ms  p99 ${r.p99} ms  cores: server ${r.serverCores.toFixed(2)} loadgen ${r.loadgenCores.toFixed(2)} machine ${r.machineCores.toFixed(2)}` +
  (r.non2xx + r.errors + r.timeouts > 0 ? `  !! ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` : "");

/** Starts a server child; returns it when ready, or records why not. */
const startPeer = async (def: PeerDef, result: { status: string; reason?: string }): Promise<{ child: Live["child"]; port: number } | undefined> => {
  const port = await freePort();
  const started = await spawnBench(def.file, { PORT: String(port), ...(def.env ?? {}) });
  const outcome = started.outcome;
  if (outcome.kind === "ready") {
    log(`  ${def.name}: ready and verified on :${port} (${Math.round(started.elapsedMs)} ms)`);
    return { child: started.child, port };
  }
  await stopChild(started.child);
  const reason = outcome.kind === "skip" || outcome.kind === "fail" ? outcome.reason : `unexpected ${outcome.kind}`;
  result.status = outcome.kind === "skip" ? "skipped" : "failed";
  result.reason = reason;
  log(`  ${def.name}: ${result.status.toUpperCase()} — ${reason}`);
  return undefined;
};

const runGroup = async (group: GroupDef): Promise<GroupResult | undefined> => {
  const names = groupPeers(group);
  if (names.length === 0) return undefined;
  log(`== ${group.title}: ${group.method} ${group.path} — ${names.join(", ")}`);
  const results: PeerResult[] = [];
  const live: Live[] = [];
  try {
    for (const name of names) {
      const def = peer(name);
      const result: PeerResult = { name: def.name, label: def.label, status: "ok", runs: [] };
      results.push(result);
      const started = await startPeer(def, result);
      if (started === undefined) continue;
      const target: Target = {
        port: started.port,
        pid: started.child.pid ?? -1,
        method: group.method,
        path: group.path,
        headers: headersFor(def, group),
        ...(group.body !== undefined ? { body: group.body } : {}),
      };
      live.push({ def, result, target, child: started.child });
    }
    for (const l of live) {
      l.result.warmup = await runLoad(l.target, { connections: CONNECTIONS, durationSec: WARMUP });
      log(`  warm-up ${l.def.name.padEnd(20)} ${fmtRun(l.result.warmup)}`);
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? live : [...live].reverse();
      for (const l of order) {
        if (l.result.status !== "ok") continue;
        if (l.child.exitCode !== null || l.child.signalCode !== null) {
          l.result.status = "failed";
          l.result.reason = `server exited during the bench (${l.child.signalCode ?? String(l.child.exitCode)})`;
          log(`  ${l.def.name}: FAILED — ${l.result.reason}`);
          continue;
        }
        const run = await runLoad(l.target, { connections: CONNECTIONS, durationSec: DURATION });
        l.result.runs.push(run);
        log(`  round ${round + 1}/${ROUNDS} ${l.def.name.padEnd(20)} ${fmtRun(run)}`);
      }
    }
  } finally {
    await Promise.all(live.map((l) => stopChild(l.child)));
  }
  const raw = results.find((r) => r.name === "raw");
  const baseline = {
    rps: raw !== undefined && raw.runs.length > 0 ? median(raw.runs.map((r) => r.rps)) : Number.NaN,
    usPerReq: raw !== undefined && raw.runs.length > 0 ? median(raw.runs.map((r) => r.serverUsPerReq)) : Number.NaN,
  };
  return {
    id: group.id,
    title: group.title,
    endpoint: `${group.method} ${group.path}`,
    baseline: "raw",
    peers: results.map((r) => {
      const summary = summarize(r, baseline, CORES);
      const def = peer(r.name);
      if (def.env?.["WORKERS"] !== undefined && summary.runs.length > 0 && summary.serverCores < 1.05) {
        summary.notes.push(`server tree never used more than one core (${summary.serverCores.toFixed(2)}): the workers give nothing here`);
      }
      return summary;
    }),
    notes: [...group.notes, ...compareNote(group, results)],
  };
};

/** "metrics on / off: 0.97× req/s (3.0 % cost), 1.04× server CPU µs/req": the cost of a feature in one line. */
const compareNote = (group: GroupDef, results: readonly PeerResult[]): string[] => {
  if (group.compare === undefined) return [];
  const figures = (name: string) => {
    const runs = results.find((r) => r.name === name && r.status === "ok")?.runs ?? [];
    return { rps: median(runs.map((r) => r.rps)), us: median(runs.map((r) => r.serverUsPerReq)) };
  };
  const on = figures(group.compare.on);
  const off = figures(group.compare.off);
  if (!Number.isFinite(on.rps / off.rps)) return [];
  const note = `${peer(group.compare.on).label} / ${peer(group.compare.off).label}: ${(on.rps / off.rps).toFixed(3)}× req/s (${((1 - on.rps / off.rps) * 100).toFixed(1)} % cost), ${(on.us / off.us).toFixed(3)}× server CPU µs/req; ${group.compare.goal}`;
  log(`  ${note}`);
  return [note];
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const runRss = async (): Promise<RssResult[]> => {
  log(`== RSS before/after ${RSS_REQUESTS.toLocaleString("en-US")} requests`);
  const out: RssResult[] = [];
  const group = GROUPS[0];
  if (group === undefined) return out;
  for (const name of ["raw", "queryserve-full-log"]) {
    const def = peer(name);
    const state: { status: string; reason?: string } = { status: "ok" };
    const started = await startPeer(def, state);
    if (started === undefined) {
      out.push({ name, label: def.label, status: state.status === "skipped" ? "skipped" : "failed", reason: state.reason ?? "" });
      continue;
    }
    try {
      const pid = started.child.pid ?? -1;
      await sleep(500);
      const beforeMiB = treeRssMiB(pid);
      const run = await runLoad(
        { port: started.port, pid, method: "GET", path: group.path, headers: headersFor(def, group) },
        { connections: CONNECTIONS, durationSec: 0, amount: RSS_REQUESTS, maxSec: 180 },
      );
      const afterMiB = treeRssMiB(pid);
      await sleep(2000);
      const afterIdleMiB = treeRssMiB(pid);
      log(
        `  ${name}: ${run.requests.toLocaleString("en-US")} requests at ${Math.round(run.rps)} req/s; RSS ${beforeMiB.toFixed(1)} → ${afterMiB.toFixed(1)} MiB, ${afterIdleMiB.toFixed(1)} MiB after 2 s idle`,
      );
      out.push({ name, label: def.label, status: "ok", requests: run.requests, non2xx: run.non2xx + run.errors, rps: run.rps, beforeMiB, afterMiB, afterIdleMiB });
    } finally {
      await stopChild(started.child);
    }
  }
  return out;
};

const runTask = async (
  file: string,
  env: Record<string, string>,
  options: { readonly timeoutMs?: number; readonly mode?: RunMode } = {},
): Promise<{ outcome: TaskResult; wallMs: number }> => {
  const port = await freePort();
  const started = await spawnBench(file, { PORT: String(port), ...env }, options.timeoutMs ?? 120_000, options.mode ?? "tsx");
  await stopChild(started.child);
  const o = started.outcome;
  if (o.kind === "result") {
    const parsed: unknown = JSON.parse(o.json);
    const data: Record<string, unknown> = typeof parsed === "object" && parsed !== null ? { ...parsed } : {};
    return { outcome: { status: "ok", data }, wallMs: started.elapsedMs };
  }
  const reason = o.kind === "ready" ? "unexpected ready line" : o.reason;
  return { outcome: { status: o.kind === "skip" ? "skipped" : "failed", reason }, wallMs: started.elapsedMs };
};

const runOpenapi = async (): Promise<TaskResult> => {
  log("== OpenAPI generation for 1,000 endpoints");
  const { outcome } = await runTask("tasks/openapi.ts", {});
  log(`  ${outcome.status}${outcome.reason !== undefined ? ` — ${outcome.reason}` : ""}${outcome.data !== undefined ? ` ${JSON.stringify(outcome.data)}` : ""}`);
  return outcome;
};

const COLD_RUNS = 5;

/** Cold-start rows: raw node:http, queryserve from dist/ as installed, and the same app bundled with its packages. */
const COLD_TARGETS: ReadonlyArray<{ readonly target: string; readonly env: string; readonly mode: RunMode }> = [
  { target: "raw", env: "raw", mode: "node" },
  { target: "queryserve", env: "queryserve", mode: "node" },
  { target: "queryserve, app bundled", env: "queryserve", mode: "bundled" },
];

const runColdStart = async (): Promise<ColdStartResult[]> => {
  log("== Cold start: spawn node (plain JavaScript, no tsx), import, define 100 queries, first answered request, RSS");
  const targets = COLD_TARGETS.map((t) => t.target);
  const runs = new Map(targets.map((target) => [target, { data: [] as Record<string, unknown>[], walls: [] as number[], failure: undefined as TaskResult | undefined }]));
  // Interleaved, so that drift of a busy box hits all alike.
  for (let i = 0; i < COLD_RUNS; i++) {
    for (const { target, env, mode } of COLD_TARGETS) {
      const state = runs.get(target)!;
      if (state.failure !== undefined) continue;
      const { outcome, wallMs } = await runTask("tasks/coldstart.ts", { COLD_TARGET: env }, { mode });
      if (outcome.status !== "ok" || outcome.data === undefined) {
        state.failure = outcome;
        log(`  ${target}: ${outcome.status.toUpperCase()} — ${outcome.reason ?? ""}`);
        continue;
      }
      state.data.push(outcome.data);
      state.walls.push(wallMs);
      log(`  ${target} #${i + 1}: first answer ${Math.round(wallMs)} ms after spawn ${JSON.stringify(outcome.data, (_k, v: unknown) => (typeof v === "number" ? Math.round(v) : v))}`);
    }
  }
  return targets.map((target) => {
    const { data, walls, failure } = runs.get(target)!;
    if (failure !== undefined) return { target, status: failure.status, reason: failure.reason ?? "", runs: data };
    return { target, status: "ok", wallMs: median(walls), rssMiB: median(data.map((d) => Number(d["rssMiB"]))), runs: data };
  });
};

const runWorkerBundle = async (): Promise<TaskResult> => {
  log("== Worker bundle: examples/worker bundled with esbuild for workerd (minified)");
  const { outcome } = await runTask("tasks/workerBundle.ts", {});
  log(`  ${outcome.status}${outcome.reason !== undefined ? ` — ${outcome.reason}` : ""}${outcome.data !== undefined ? ` ${JSON.stringify(outcome.data)}` : ""}`);
  return outcome;
};

const runCache = async (): Promise<CacheResults> => {
  const cache: CacheResults = {};
  for (const [key, file, title] of [
    ["throughput", "tasks/cacheThroughput.ts", "demo endpoint over DuckDB, cached vs uncached vs raw node:http"],
    ["stampede", "tasks/cacheStampede.ts", "stampede of 1,000 concurrent identical cold requests"],
    ["memory", "tasks/cacheMemory.ts", "100,000 distinct keys into the memory store"],
  ] as const) {
    log(`== Result cache: ${title}`);
    cache[key] = (await runTask(file, {}, { timeoutMs: 600_000 })).outcome;
    log(`  ${cache[key].status}${cache[key].reason !== undefined ? ` — ${cache[key].reason}` : ""}`);
  }
  return cache;
};

// ---------------------------------------------------------------- main

const gitCommit = (): string => {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { encoding: "utf8" }).trim() !== "";
    return dirty ? `${head} + uncommitted changes in src/` : head;
  } catch {
    return "unknown";
  }
};

const main = async (): Promise<void> => {
  const meta: Meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cores: CORES,
    backgroundCores: [],
    os: `${type()} ${release()}`,
    commit: gitCommit(),
    connections: CONNECTIONS,
    durationSec: DURATION,
    warmupSec: WARMUP,
    rounds: ROUNDS,
    only: ONLY_RAW === "" ? null : ONLY_RAW,
    totalSec: 0,
  };
  log(`bench: ${meta.cores} cores (${meta.cpuModel}), Node ${meta.node}; ${CONNECTIONS} connections, warm-up ${WARMUP} s, ${ROUNDS} × ${DURATION} s per server${ONLY.size > 0 ? `, only ${ONLY_RAW}` : ""}`);
  const results: Results = { meta, groups: [], rss: [], coldStart: [] };
  const background = async (): Promise<void> => {
    const busy0 = machineBusySeconds();
    await sleep(1000);
    const cores = machineBusySeconds() - busy0;
    meta.backgroundCores.push(cores);
    log(`background load: ${cores.toFixed(2)} of ${CORES} cores busy with no bench traffic${cores > 0.2 ? " — other work is running on this box; req/s will be depressed and noisy" : ""}`);
  };
  for (const group of GROUPS) {
    if (groupPeers(group).length > 0) await background();
    const result = await runGroup(group);
    if (result !== undefined) results.groups.push(result);
  }
  if (sectionOn("rss") || ONLY.has("queryserve-full-log")) {
    await background();
    results.rss.push(...(await runRss()));
  }
  if (sectionOn("openapi")) results.openapi = await runOpenapi();
  if (sectionOn("coldstart")) results.coldStart.push(...(await runColdStart()));
  if (sectionOn("bundle")) results.worker = await runWorkerBundle();
  if (sectionOn("mcp")) {
    log("== MCP tools/call vs plain HTTP, same endpoint and server");
    results.mcp = await runMcpTask({ connections: CONNECTIONS, durationSec: DURATION, warmupSec: WARMUP, rounds: ROUNDS, log, format: fmtRun });
  }
  if (sectionOn("cache")) results.cache = await runCache();
  if (sectionOn("goals")) {
    await background();
    log("== Goals against raw node:http (metrics: against the same setup without), in back-to-back pairs (alternating first)");
    results.goals = await runPairedTask({ connections: CONNECTIONS, warmupSec: WARMUP, log, format: fmtRun });
  }
  if (sectionOn("datasets")) {
    await background();
    log("== Datasets: a dataset query against the same question answered by hand, in back-to-back pairs (alternating first)");
    const runCompileTask = async (): Promise<TaskResult> => (await runTask("tasks/datasetCompile.ts", {})).outcome;
    results.datasets = await runDatasetsTask({ connections: CONNECTIONS, warmupSec: WARMUP, log, format: fmtRun, runCompileTask });
  }
  if (sectionOn("export")) {
    await background();
    log("== Export: one tenant's orders of a year as CSV from DuckDB, queryserve vs node:http streaming by hand");
    results.export = await runExportTask({ log });
  }
  meta.totalSec = (performance.now() - t0) / 1000;
  process.stdout.write(`${consoleReport(results)}\n\n`);
  if (process.env["BENCH_NO_WRITE"] === "1") {
    log("BENCH_NO_WRITE=1: results not written");
  } else {
    const jsonPath = fileURLToPath(new URL("./results.json", import.meta.url));
    const mdPath = fileURLToPath(new URL("./RESULTS.md", import.meta.url));
    writeResultFiles(results, jsonPath, mdPath);
    log("wrote bench/results.json and bench/RESULTS.md");
  }
  log(`done in ${Math.round(meta.totalSec)} s`);
};

process.on("exit", killAllNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping servers`);
    void stopAll().finally(() => process.exit(130));
  });
}

main().then(
  () => stopAll().then(() => process.exit(0)),
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void stopAll().finally(() => process.exit(1));
  },
);
