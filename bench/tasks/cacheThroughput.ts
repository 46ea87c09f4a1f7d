/**
 * The result cache on a demo endpoint over DuckDB (run by bench/run.ts in its own process): the
 * queryserve demo with the cache on and off, against raw node:http serving the same endpoint from a
 * Map of its answers (the ceiling of a hand-written cache) and running the query every time.
 * Each server is a child process; autocannon runs here, interleaved rounds, medians.
 * Prints `result <json>` or `fail <reason>`.
 */
import { freePort, spawnBench, stopAll, stopChild } from "../lib/children.js";
import { DEMO_KEY, DEMO_KEY_HEADER, DEMO_URL_PATH } from "../lib/demo.js";
import { envNumber } from "../lib/env.js";
import { runLoad, type RunResult, type Target } from "../lib/load.js";
import { median } from "../lib/report.js";

const DURATION = envNumber("BENCH_DURATION", 3);
const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 2));
const WARMUP = envNumber("BENCH_WARMUP", Math.min(2, DURATION));
const CONNECTIONS = Math.round(envNumber("BENCH_CONNECTIONS", 50));

const SERVERS = [
  { name: "raw-memo", label: "raw node:http, answers kept in a Map", file: "servers/demo-raw.ts", env: { MODE: "memo" } },
  { name: "raw-query", label: "raw node:http, DuckDB query per request", file: "servers/demo-raw.ts", env: { MODE: "query" } },
  { name: "cached", label: "queryserve demo, result cache on", file: "servers/demo-queryserve.ts", env: { CACHE: "memory" } },
  { name: "uncached", label: "queryserve demo, result cache off", file: "servers/demo-queryserve.ts", env: { CACHE: "off" } },
] as const;

const emit = (line: string): void => void process.stdout.write(`${line}\n`);

interface Live {
  readonly name: string;
  readonly label: string;
  readonly target: Target;
  readonly runs: RunResult[];
}

const main = async (): Promise<void> => {
  const live: Live[] = [];
  const children = [];
  try {
    for (const server of SERVERS) {
      const port = await freePort();
      const started = await spawnBench(server.file, { PORT: String(port), ...server.env }, 180_000);
      children.push(started.child);
      if (started.outcome.kind !== "ready") throw new Error(`${server.name}: ${"reason" in started.outcome ? started.outcome.reason : started.outcome.kind}`);
      const headers = { [DEMO_KEY_HEADER]: DEMO_KEY };
      live.push({ name: server.name, label: server.label, target: { port, pid: started.child.pid ?? -1, method: "GET", path: DEMO_URL_PATH, headers }, runs: [] });
    }
    // Every server answers the measured request with the same bytes (this also fills the caches).
    const bodies = await Promise.all(
      live.map((l) => fetch(`http://127.0.0.1:${l.target.port}${DEMO_URL_PATH}`, { headers: l.target.headers }).then((r) => r.text())),
    );
    if (new Set(bodies).size !== 1) throw new Error(`the servers answer differently: ${bodies.map((b) => b.slice(0, 60)).join(" | ")}`);
    for (const l of live) await runLoad(l.target, { connections: CONNECTIONS, durationSec: WARMUP });
    for (let round = 0; round < ROUNDS; round++) {
      for (const l of round % 2 === 0 ? live : [...live].reverse()) {
        l.runs.push(await runLoad(l.target, { connections: CONNECTIONS, durationSec: DURATION }));
      }
    }
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
  }
  const rps = (name: string): number => median(live.find((l) => l.name === name)?.runs.map((r) => r.rps) ?? []);
  const rows = live.map((l) => ({
    name: l.name,
    label: l.label,
    rps: median(l.runs.map((r) => r.rps)),
    usPerReq: median(l.runs.map((r) => r.serverUsPerReq)),
    p50: median(l.runs.map((r) => r.p50)),
    p99: median(l.runs.map((r) => r.p99)),
    serverCores: median(l.runs.map((r) => r.serverCores)),
    loadgenCores: median(l.runs.map((r) => r.loadgenCores)),
    bad: l.runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
  }));
  emit(
    `result ${JSON.stringify({
      endpoint: `GET ${DEMO_URL_PATH}`,
      rows,
      cachedVsRawMemo: rps("cached") / rps("raw-memo"),
      cachedVsRawQuery: rps("cached") / rps("raw-query"),
      cachedVsUncached: rps("cached") / rps("uncached"),
      goal: "cached ≥ 0.8× raw node:http (the Map row)",
    })}`,
  );
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    emit(`fail ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")}`);
    void stopAll().finally(() => process.exit(1));
  },
);
