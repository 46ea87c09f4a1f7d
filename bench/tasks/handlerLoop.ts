/**
 * The pipeline alone, without sockets: calls `builder.handler` of one setup in a loop with the
 * GET request of the fixture (or with `post`, the POST request with its JSON body as the Node
 * adapter hands it over: text) and prints the CPU µs per call. For profiling and quick A/B of
 * pipeline changes on a busy box (`node --cpu-prof` on it shows only queryserve's own frames):
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx bench/tasks/handlerLoop.ts full [post]
 * SETUP: bare | full | full-log | full-metrics (default full); CALLS (default 500000).
 * YIELD_EVERY=n lets the event loop turn (setImmediate) after every n calls, as a server's does
 * between requests: what is scheduled meanwhile runs (prom-client's GC and event-loop-delay
 * observers, timers), and per-request costs that one synchronous stretch hides show up. With
 * YIELD_EVERY=100 every setup costs ~0.5 µs more per call (the turns themselves), and full-metrics
 * came closer to what it costs over HTTP (docs/metrics.md, "Cost").
 */
import { API_KEY, API_KEY_HEADER, GET_PATH, POST_BODY, POST_PATH } from "../lib/fixture.js";
import type { ServeRequest } from "queryserve";
import { defineSetup, type Setup } from "../lib/queryserve.js";

// The figures go to stdout: the log setup does not write its lines there, unless QS_LOG_MODE says so.
process.env["QS_LOG_MODE"] ??= "sink";
const setupArg = process.argv[2] ?? "full";
if (setupArg !== "bare" && setupArg !== "full" && setupArg !== "full-log" && setupArg !== "full-metrics") throw new Error(`unknown setup ${setupArg}`);
const setup: Setup = setupArg;
const post = process.argv[3] === "post";
const calls = Number(process.env["CALLS"] ?? "500000");
const handler = defineSetup(setup).handler;
const headers = { host: "127.0.0.1", [API_KEY_HEADER]: API_KEY, accept: "*/*", ...(post ? { "content-type": "application/json" } : {}) };
const request: ServeRequest = post
  ? { method: "POST", path: POST_PATH, query: {}, headers, body: POST_BODY }
  : { method: "GET", path: GET_PATH, query: { region: "eu" }, headers };

/** Calls between two turns of the event loop; YIELD_EVERY=0 runs the calls in one synchronous stretch. */
const yieldEvery = Number(process.env["YIELD_EVERY"] ?? "0");
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const run = async (n: number): Promise<number> => {
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const answer = handler(request);
    if (answer instanceof Promise || !("status" in answer) || answer.status !== 200) throw new Error("expected a synchronous 200");
    bytes += answer.body?.length ?? 0;
    if (yieldEvery > 0 && i % yieldEvery === yieldEvery - 1) await turn();
  }
  return bytes;
};

// prom-client loads asynchronously; a synchronous loop would never let it: one scrape waits for it.
if (setup === "full-metrics") await handler({ method: "GET", path: "/api/analytics/metrics", headers });
await run(Math.min(calls, 50_000));
const before = process.cpuUsage();
await run(calls);
const used = process.cpuUsage(before);
// stdout directly: in QS_LOG_MODE=sink the full-log setup sends console.log to its sink.
process.stdout.write(`${setup}${post ? " POST" : ""}: ${((used.user + used.system) / calls).toFixed(2)} CPU µs per handle()\n`);
