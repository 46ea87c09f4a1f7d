/**
 * A stampede on the result cache (run by bench/run.ts in its own process): 1,000 concurrent
 * identical requests for a cold entry of the demo endpoint over DuckDB, on connections opened
 * beforehand so that they arrive together. Counts how often the handler ran: in one process
 * (memory store), and in two processes sharing one Redis store (500 requests each).
 * Prints `result <json>` or `fail <reason>`.
 */
import { spawnSync } from "node:child_process";
import { Agent, request } from "node:http";
import { startRedis } from "../../test/support/redisServer.js";
import { freePort, spawnBench, stopAll, stopChild } from "../lib/children.js";
import { DEMO_KEY, DEMO_KEY_HEADER, DEMO_STATS_PATH, DEMO_URL_PATH } from "../lib/demo.js";

const REQUESTS = 1_000;

const emit = (line: string): void => void process.stdout.write(`${line}\n`);

const fetchOn = (agent: Agent, port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; cache: string }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, cache: String(res.headers["x-cache"]) }));
    });
    req.on("error", reject);
    req.end();
  });

const misses = async (port: number): Promise<number> => (JSON.parse((await fetchOn(new Agent(), port, DEMO_STATS_PATH)).body) as { misses: number }).misses;

/** `count` requests per port, fired at once on already open connections; resolves the handler runs they caused. */
const stampede = async (ports: ReadonlyArray<number>, count: number) => {
  const agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: count }));
  try {
    // Open the connections first (cheap requests), so the measured ones arrive together.
    await Promise.all(ports.flatMap((port, i) => Array.from({ length: count }, () => fetchOn(agents[i]!, port, DEMO_STATS_PATH))));
    const before = await Promise.all(ports.map(misses));
    const started = performance.now();
    const answers = await Promise.all(
      ports.flatMap((port, i) => Array.from({ length: count }, () => fetchOn(agents[i]!, port, DEMO_URL_PATH, { [DEMO_KEY_HEADER]: DEMO_KEY }))),
    );
    const ms = performance.now() - started;
    const after = await Promise.all(ports.map(misses));
    if (answers.some((answer) => answer.status !== 200)) throw new Error(`not every answer was 200: ${[...new Set(answers.map((a) => a.status))].join(", ")}`);
    if (new Set(answers.map((answer) => answer.body)).size !== 1) throw new Error("the answers differ");
    return {
      requests: answers.length,
      handlerRuns: after.reduce((sum, n, i) => sum + n - before[i]!, 0),
      perProcess: after.map((n, i) => n - before[i]!),
      hits: answers.filter((answer) => answer.cache === "HIT").length,
      ms,
    };
  } finally {
    for (const agent of agents) agent.destroy();
  }
};

const server = async (env: Record<string, string>) => {
  const port = await freePort();
  const started = await spawnBench("servers/demo-queryserve.ts", { PORT: String(port), ...env }, 180_000);
  if (started.outcome.kind !== "ready") {
    await stopChild(started.child);
    throw new Error("reason" in started.outcome ? started.outcome.reason : started.outcome.kind);
  }
  return { port, child: started.child };
};

/** Resolves once a process answers a repeated request from Redis (its connection is up). */
const connected = async (port: number): Promise<void> => {
  const agent = new Agent();
  for (let attempt = 0; attempt < 200; attempt++) {
    const path = `/api/analytics/revenueByRegion?from=2025-02-01&to=2025-02-${String(1 + (attempt % 27)).padStart(2, "0")}`;
    await fetchOn(agent, port, path, { [DEMO_KEY_HEADER]: DEMO_KEY });
    if ((await fetchOn(agent, port, path, { [DEMO_KEY_HEADER]: DEMO_KEY })).cache === "HIT") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the Redis store never answered");
};

const main = async (): Promise<void> => {
  const result: Record<string, unknown> = { requests: REQUESTS };
  const one = await server({ CACHE: "memory" });
  try {
    result["oneProcess"] = await stampede([one.port], REQUESTS);
  } finally {
    await stopChild(one.child);
  }
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) {
    result["twoProcessesRedis"] = { skipped: "redis-server is not installed" };
  } else {
    const redis = await startRedis();
    try {
      const pair = await Promise.all([server({ CACHE: "redis", REDIS_URL: redis.url }), server({ CACHE: "redis", REDIS_URL: redis.url })]);
      try {
        await Promise.all(pair.map((p) => connected(p.port)));
        result["twoProcessesRedis"] = await stampede(pair.map((p) => p.port), REQUESTS / 2);
      } finally {
        await Promise.all(pair.map((p) => stopChild(p.child)));
      }
    } finally {
      await redis.stop();
    }
  }
  result["goal"] = "the handler runs exactly once in one process";
  emit(`result ${JSON.stringify(result)}`);
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    emit(`fail ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")}`);
    void stopAll().finally(() => process.exit(1));
  },
);
