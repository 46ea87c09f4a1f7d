/**
 * The issue goals against raw node:http (and the cost of metrics, against the same setup without
 * them), measured in pairs: each round runs the baseline and one queryserve setup back to back (the
 * baseline first in even rounds, second in odd ones: A B, B A, …), and the round's ratio is the
 * setup's req/s over the baseline's in that same round. The figure is the median of the rounds'
 * ratios. On a box whose speed swings by 2× within a minute, a ratio of medians taken minutes apart
 * measures the swing; two runs seconds apart see nearly the same box, and the median drops the
 * rounds a swing still hit. Each round runs every goal's pair in turn. Run by bench/run.ts (section `goals`);
 * `runPairs` also runs the `datasets` section's pairs (tasks/datasets.ts).
 *
 * Env: BENCH_PAIRS (rounds per goal, default 8), BENCH_PAIR_DURATION (seconds per run, default 2),
 * BENCH_GOALS (ids of the goals to run, in that order, e.g. `get-log,get-full`; default all).
 */
import type { ChildProcess } from "node:child_process";
import { envNumber } from "../lib/env.js";
import { API_KEY, API_KEY_HEADER, GET_URL_PATH, POST_BODY, POST_PATH } from "../lib/fixture.js";
import { runLoad, type RunOptions, type RunResult, type Target } from "../lib/load.js";
import { freePort, spawnBench, stopChild } from "../lib/children.js";
import type { TaskResult } from "../lib/report.js";

const PAIRS = Math.max(2, Math.round(envNumber("BENCH_PAIRS", 8)));
const PAIR_DURATION = envNumber("BENCH_PAIR_DURATION", 2);

/** One side of a pair: a server of bench/servers, the env it starts with, the headers its requests carry. */
export interface PairServer {
  readonly name: string;
  readonly file: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
}

export interface PairGoal {
  readonly id: string;
  readonly label: string;
  readonly server: PairServer;
  /** What the server is measured against: raw node:http, or (for the cost of a feature) the same setup without it. */
  readonly baseline: PairServer;
  /** How the report names the baseline's figures: "raw node:http's". */
  readonly baselineLabel: string;
  readonly method: "GET" | "POST";
  /** The path each side is asked; a function of the side when the two serve the question at different paths. */
  readonly path: string | ((side: PairServer) => string);
  readonly body?: string;
  /** The goal; none for a reference row, which shows what a goal is up against. */
  readonly minRatio?: number;
  /**
   * Both servers loaded at the same time, each by its own load generator, and judged by server CPU
   * per request: for the cost of a feature, where the figure is a few percent and the box's swings
   * between two back-to-back runs are larger. Sharing the box compresses req/s ratios toward 1×
   * (each server gets about half of it), so they are reported, not judged.
   */
  readonly simultaneous?: boolean;
  /**
   * Connections and the shortest run for requests that take milliseconds (a database query): at the
   * defaults a run would complete too few of them, and those still in flight at its end are lost.
   */
  readonly load?: { readonly connections: number; readonly minDurationSec: number };
}

/** A server of the fixture (servers/<name>.ts); every one but raw is sent the API key. */
const fixtureServer = (name: string): PairServer => ({
  name,
  file: `servers/${name}.ts`,
  headers: name === "raw" ? {} : { [API_KEY_HEADER]: API_KEY },
});

/** A goal on the fixture's endpoint: GET_URL_PATH, or POST_PATH with POST_BODY. */
const fixtureGoal = (
  goal: Omit<PairGoal, "server" | "baseline" | "baselineLabel" | "path" | "body"> & {
    readonly server: string;
    readonly baseline: "raw" | "queryserve-full";
  },
): PairGoal => ({
  ...goal,
  server: fixtureServer(goal.server),
  baseline: fixtureServer(goal.baseline),
  baselineLabel: goal.baseline === "raw" ? "raw node:http's" : "queryserve full's (metrics off)",
  path: goal.method === "GET" ? GET_URL_PATH : POST_PATH,
  ...(goal.method === "POST" ? { body: POST_BODY } : {}),
});

const GOALS: ReadonlyArray<PairGoal> = [
  fixtureGoal({ id: "get-full", label: "GET, full pipeline", server: "queryserve-full", baseline: "raw", method: "GET", minRatio: 0.94 }),
  fixtureGoal({ id: "get-log", label: "GET, full pipeline + JSON log", server: "queryserve-full-log", baseline: "raw", method: "GET", minRatio: 0.95 }),
  // What the log goal is up against: raw node:http itself, writing the same line by hand.
  fixtureGoal({ id: "get-log-floor", label: "Reference: raw node:http writing the same JSON line by hand", server: "raw-log", baseline: "raw", method: "GET" }),
  fixtureGoal({ id: "post-full", label: "POST with a validated JSON body, full pipeline", server: "queryserve-full", baseline: "raw", method: "POST", minRatio: 0.9 }),
  fixtureGoal({
    id: "metrics",
    label: "GET, full pipeline + metrics (at most 5 % cost)",
    server: "queryserve-full-metrics",
    baseline: "queryserve-full",
    method: "GET",
    minRatio: 0.95,
    simultaneous: true,
  }),
];

/** The goals BENCH_GOALS names, in its order; all of them when it is unset. */
const selectedGoals = (): ReadonlyArray<PairGoal> => {
  const ids = (process.env["BENCH_GOALS"] ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "");
  if (ids.length === 0) return GOALS;
  return ids.map((id) => {
    const goal = GOALS.find((candidate) => candidate.id === id);
    if (goal === undefined) throw new Error(`BENCH_GOALS: no goal "${id}" (${GOALS.map((candidate) => candidate.id).join(", ")})`);
    return goal;
  });
};

export interface PairedOptions {
  readonly connections: number;
  readonly warmupSec: number;
  readonly log: (line: string) => void;
  readonly format: (run: RunResult) => string;
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
};

const targetOf = (port: number, child: ChildProcess, goal: PairGoal, side: PairServer): Target => ({
  port,
  pid: child.pid ?? -1,
  method: goal.method,
  path: typeof goal.path === "string" ? goal.path : goal.path(side),
  headers: { ...side.headers, ...(goal.body !== undefined ? { "content-type": "application/json" } : {}) },
  ...(goal.body !== undefined ? { body: goal.body } : {}),
});

/** Throws unless both sides answer the goal's request with 200 and the same body (which also fills any cache). */
const checkSameAnswer = async (goal: PairGoal, targets: Readonly<Record<"baseline" | "peer", Target>>): Promise<void> => {
  const answer = async (target: Target): Promise<string> => {
    const init: RequestInit = { method: target.method, headers: target.headers, ...(target.body !== undefined ? { body: target.body } : {}) };
    const response = await fetch(`http://127.0.0.1:${target.port}${target.path}`, init);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${goal.id}: ${target.method} ${target.path} answered ${response.status}: ${text.slice(0, 120)}`);
    return text;
  };
  const [baseline, peer] = await Promise.all([answer(targets.baseline), answer(targets.peer)]);
  if (baseline !== peer) throw new Error(`${goal.id}: the two sides answer differently: ${baseline.slice(0, 80)} | ${peer.slice(0, 80)}`);
};

export const runPairedTask = (options: PairedOptions): Promise<TaskResult> => runPairs(selectedGoals(), options);

/**
 * Runs `goals` in back-to-back pairs (see the top of this file); also the `datasets` section's goals.
 * The servers may build a database before they are ready (`startTimeoutMs`).
 */
export const runPairs = async (goals: ReadonlyArray<PairGoal>, options: PairedOptions, startTimeoutMs = 60_000): Promise<TaskResult> => {
  const children = new Map<string, { child: ChildProcess; port: number }>();
  try {
    // Every goal gets servers of its own: a server that also answers another goal's requests (the
    // GET goal's server serving the POST goal's too) runs code shaped by both, which may be slower
    // at each than a server that only ever saw one.
    const keyOf = (goal: PairGoal, side: PairServer): string => `${goal.id}/${side.name}`;
    for (const goal of goals) {
      for (const side of [goal.baseline, goal.server]) {
        if (children.has(keyOf(goal, side))) continue;
        const port = await freePort();
        const started = await spawnBench(side.file, { PORT: String(port), ...(side.env ?? {}) }, startTimeoutMs);
        children.set(keyOf(goal, side), { child: started.child, port });
        if (started.outcome.kind !== "ready") {
          const reason = "reason" in started.outcome ? started.outcome.reason : started.outcome.kind;
          return { status: started.outcome.kind === "skip" ? "skipped" : "failed", reason: `${side.name}: ${reason}` };
        }
      }
    }
    const plans = goals.map((goal) => {
      const baseline = children.get(keyOf(goal, goal.baseline))!;
      const peer = children.get(keyOf(goal, goal.server))!;
      const targets = { baseline: targetOf(baseline.port, baseline.child, goal, goal.baseline), peer: targetOf(peer.port, peer.child, goal, goal.server) };
      const load = { connections: goal.load?.connections ?? options.connections, durationSec: Math.max(PAIR_DURATION, goal.load?.minDurationSec ?? 0) };
      return { goal, targets, load, ratios: [] as number[], cpuRatios: [] as number[], failures: 0 };
    });
    for (const { goal, targets } of plans) await checkSameAnswer(goal, targets);
    const shared = (): RunOptions => ({ connections: Math.max(1, Math.round(options.connections / 2)), durationSec: PAIR_DURATION });
    for (const { goal, targets, load } of plans) {
      if (goal.simultaneous === true) {
        const warmup = { ...shared(), durationSec: options.warmupSec };
        await Promise.all([runLoad(targets.baseline, warmup), runLoad(targets.peer, warmup)]);
      } else {
        for (const side of ["baseline", "peer"] as const) await runLoad(targets[side], { connections: load.connections, durationSec: options.warmupSec });
      }
    }
    // Round by round across the goals, not goal after goal: a slow minute of the box then falls on
    // every goal alike, and no server idles for minutes between its warm-up and its runs.
    for (let round = 0; round < PAIRS; round++) {
      for (const plan of plans) {
        const { goal, targets, load } = plan;
        const runs: Partial<Record<"baseline" | "peer", RunResult>> = {};
        if (goal.simultaneous === true) {
          [runs.baseline, runs.peer] = await Promise.all([runLoad(targets.baseline, shared()), runLoad(targets.peer, shared())]);
        } else {
          for (const side of round % 2 === 0 ? (["baseline", "peer"] as const) : (["peer", "baseline"] as const)) {
            runs[side] = await runLoad(targets[side], load);
          }
        }
        for (const run of [runs.baseline!, runs.peer!]) plan.failures += run.non2xx + run.errors + run.timeouts;
        plan.ratios.push(runs.peer!.rps / runs.baseline!.rps);
        plan.cpuRatios.push(runs.baseline!.serverUsPerReq / runs.peer!.serverUsPerReq);
        const side = (run: RunResult): string => `${Math.round(run.rps)} req/s ${run.serverUsPerReq.toFixed(1)} µs`;
        options.log(`  ${goal.id} round ${round + 1}/${PAIRS}: ${goal.baseline.name} ${side(runs.baseline!)}, ${goal.server.name} ${side(runs.peer!)} → ${plan.ratios.at(-1)!.toFixed(3)}× req/s, ${plan.cpuRatios.at(-1)!.toFixed(3)}× CPU`);
      }
    }
    const rows = plans.map(({ goal, load, ratios, cpuRatios, failures }) => {
      const row = {
        id: goal.id,
        label: goal.label,
        server: goal.server.name,
        baseline: goal.baselineLabel,
        simultaneous: goal.simultaneous === true,
        goal: goal.minRatio,
        ratio: median(ratios),
        lowest: Math.min(...ratios),
        highest: Math.max(...ratios),
        cpuRatio: median(cpuRatios),
        rounds: PAIRS,
        durationSec: load.durationSec,
        connections: load.connections,
        failures,
      };
      const judged = row.simultaneous ? `server CPU per request ${row.cpuRatio.toFixed(3)}× as efficient` : `${row.ratio.toFixed(3)}×`;
      const target = goal.minRatio === undefined ? "no goal" : `goal ≥ ${goal.minRatio}`;
      options.log(`  ${goal.label}: ${judged} ${goal.baseline.name} (median of ${PAIRS} pairs, req/s ${row.lowest.toFixed(2)}–${row.highest.toFixed(2)}; ${target})`);
      return row;
    });
    return { status: "ok", data: { pairDurationSec: PAIR_DURATION, rows } };
  } catch (error) {
    return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await Promise.all([...children.values()].map(({ child }) => stopChild(child)));
  }
};

interface PairedRow {
  readonly label: string;
  readonly baseline?: string;
  readonly simultaneous?: boolean;
  readonly goal?: number;
  readonly ratio: number;
  readonly lowest: number;
  readonly highest: number;
  readonly cpuRatio: number;
  readonly rounds: number;
  readonly durationSec?: number;
  readonly failures: number;
}

const isRow = (value: unknown): value is PairedRow =>
  typeof value === "object" && value !== null && "label" in value && "ratio" in value;

/** `goal ≥ 0.95: met`, or what a reference row is for. */
const verdict = (goal: number | undefined, figure: number): string =>
  goal === undefined ? "no goal: what a goal above is up against" : `goal ≥ ${goal}: ${figure >= goal ? "met" : "not met"}`;

/** The section's lines for the console and RESULTS.md. */
export const pairedLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`${task.status}: ${task.reason ?? ""}`];
  const rows = Array.isArray(task.data["rows"]) ? task.data["rows"].filter(isRow) : [];
  return rows.map((row) => {
    const runs = `${row.rounds} pairs of ${String(row.durationSec ?? task.data?.["pairDurationSec"])} s runs`;
    const failed = row.failures > 0 ? `; ${row.failures} failed requests` : "";
    if (row.simultaneous === true) {
      return `- ${row.label}: server CPU per request ${row.cpuRatio.toFixed(3)}× as efficient as ${row.baseline ?? "the baseline"} ` +
        `(median of ${runs}, both servers loaded at the same time; req/s ${row.ratio.toFixed(3)}×, ${row.lowest.toFixed(2)}–${row.highest.toFixed(2)}) — ` +
        `${verdict(row.goal, row.cpuRatio)}${failed}`;
    }
    return `- ${row.label}: ${row.ratio.toFixed(3)}× ${row.baseline ?? "raw node:http's"} req/s (median of ${runs}, ` +
      `${row.lowest.toFixed(2)}–${row.highest.toFixed(2)}; server CPU per request ${row.cpuRatio.toFixed(3)}× as efficient) — ` +
      `${verdict(row.goal, row.ratio)}${failed}`;
  });
};
