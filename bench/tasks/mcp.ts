/**
 * tools/call next to plain HTTP, on the same endpoint of the same server: queryserve "full" with
 * `mcp: true` (bench/servers/queryserve-full-mcp.ts) answers both
 *   GET  /api/analytics/revenue?region=eu                              (plain HTTP)
 *   POST /api/analytics/mcp  tools/call revenue {"region":"eu"}        (MCP, Streamable HTTP, JSON answer)
 * Both go through the API key, the role guard, validation and the middleware. Runs are interleaved
 * (HTTP, MCP, then MCP, HTTP, …); the ratio is MCP req/s over HTTP req/s. Run by bench/run.ts.
 */
import { freePort, spawnBench, stopChild } from "../lib/children.js";
import { API_KEY, API_KEY_HEADER, BASE_PATH, EXPECTED_GET_BODY, GET_URL_PATH } from "../lib/fixture.js";
import { runLoad, type RunOptions, type RunResult, type Target } from "../lib/load.js";
import type { TaskResult } from "../lib/report.js";

export const MCP_PATH = `${BASE_PATH}/mcp`;

export const MCP_HEADERS = {
  [API_KEY_HEADER]: API_KEY,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

export const TOOLS_CALL = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "revenue", arguments: { region: "eu" } } });

/** The tools/call answer must carry the exact body plain HTTP answers, or the figures mean nothing. */
const verifyToolCall = async (port: number): Promise<void> => {
  const response = await fetch(`http://127.0.0.1:${port}${MCP_PATH}`, { method: "POST", headers: MCP_HEADERS, body: TOOLS_CALL });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`tools/call answered ${response.status}: ${text.slice(0, 200)}`);
  const message = JSON.parse(text) as { result?: { content?: ReadonlyArray<{ text?: string }>; isError?: boolean } };
  const body = message.result?.content?.[0]?.text;
  if (message.result?.isError === true || body !== EXPECTED_GET_BODY) throw new Error(`tools/call answered ${text.slice(0, 200)}`);
};

export interface McpTaskOptions extends Pick<RunOptions, "connections"> {
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
  readonly format: (run: RunResult) => string;
}

const medianOf = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

export const runMcpTask = async (options: McpTaskOptions): Promise<TaskResult> => {
  const port = await freePort();
  const started = await spawnBench("servers/queryserve-full-mcp.ts", { PORT: String(port) });
  try {
    if (started.outcome.kind !== "ready") {
      const reason = "reason" in started.outcome ? started.outcome.reason : started.outcome.kind;
      return { status: started.outcome.kind === "skip" ? "skipped" : "failed", reason };
    }
    await verifyToolCall(port);
    const pid = started.child.pid ?? -1;
    const targets: Record<"http" | "mcp", Target> = {
      http: { port, pid, method: "GET", path: GET_URL_PATH, headers: { [API_KEY_HEADER]: API_KEY } },
      mcp: { port, pid, method: "POST", path: MCP_PATH, headers: MCP_HEADERS, body: TOOLS_CALL },
    };
    const runs: Record<"http" | "mcp", RunResult[]> = { http: [], mcp: [] };
    for (const name of ["http", "mcp"] as const) {
      options.log(`  warm-up ${name.padEnd(5)} ${options.format(await runLoad(targets[name], { connections: options.connections, durationSec: options.warmupSec }))}`);
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const name of round % 2 === 0 ? (["http", "mcp"] as const) : (["mcp", "http"] as const)) {
        const run = await runLoad(targets[name], { connections: options.connections, durationSec: options.durationSec });
        runs[name].push(run);
        options.log(`  round ${round + 1}/${options.rounds} ${name.padEnd(5)} ${options.format(run)}`);
      }
    }
    const rps = (name: "http" | "mcp") => medianOf(runs[name].map((r) => r.rps));
    const usPerReq = (name: "http" | "mcp") => medianOf(runs[name].map((r) => r.serverUsPerReq));
    const failures = [...runs.http, ...runs.mcp].reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
    const data = {
      httpRps: rps("http"),
      mcpRps: rps("mcp"),
      ratio: rps("mcp") / rps("http"),
      httpUsPerReq: usPerReq("http"),
      mcpUsPerReq: usPerReq("mcp"),
      failures,
    };
    options.log(`  tools/call ${Math.round(data.mcpRps)} req/s vs plain HTTP ${Math.round(data.httpRps)} req/s: ${data.ratio.toFixed(2)}× (goal ≥ 0.5×)`);
    return { status: "ok", data };
  } catch (error) {
    return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await stopChild(started.child);
  }
};

/** The task's lines for the console and RESULTS.md. */
export const mcpLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`${task.status}: ${task.reason ?? ""}`];
  const d = task.data;
  const n = (key: string): string => Math.round(Number(d[key])).toLocaleString("en-US");
  return [
    `- plain HTTP \`GET ${GET_URL_PATH}\`: ${n("httpRps")} req/s, ${n("httpUsPerReq")} server CPU µs/req`,
    `- MCP \`POST ${MCP_PATH}\` tools/call: ${n("mcpRps")} req/s, ${n("mcpUsPerReq")} server CPU µs/req`,
    `- tools/call ÷ plain HTTP: ${Number(d["ratio"]).toFixed(2)}× (goal ≥ 0.5×)${Number(d["failures"]) > 0 ? `; ${n("failures")} failed requests` : ""}`,
  ];
};
