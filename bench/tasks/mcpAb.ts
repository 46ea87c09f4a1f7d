/**
 * Quick interleaved A/B of server CPU per request: one server per variant (VARIANTS, `;`-separated
 * lists of NAME=value environment settings, default one plain variant; SERVER=path relative to bench/
 * picks another server file, e.g. one of a copy of the repository at another commit), each driven in turn with the
 * plain GET and MCP tools/call (TARGETS: get, post, ping, mcp) for ROUNDS rounds of SECONDS each.
 * Loopback only.
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx bench/tasks/mcpAb.ts
 */
import { freePort, spawnBench, stopChild } from "../lib/children.js";
import { API_KEY, API_KEY_HEADER, GET_URL_PATH, POST_BODY, POST_PATH } from "../lib/fixture.js";
import { runLoad, type Target } from "../lib/load.js";
import { MCP_PATH } from "./mcp.js";

const rounds = Number(process.env["ROUNDS"] ?? "4");
const seconds = Number(process.env["SECONDS"] ?? "2");
const names = (process.env["TARGETS"] ?? "get,mcp").split(",");
const variants = (process.env["VARIANTS"] ?? "").split(";");
const MCP_HEADERS = { [API_KEY_HEADER]: API_KEY, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
const rpc = (method: string, params?: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, ...(params === undefined ? {} : { params }) });

const targetsFor = (port: number, pid: number): Record<string, Target> => ({
  get: { port, pid, method: "GET", path: GET_URL_PATH, headers: { [API_KEY_HEADER]: API_KEY } },
  post: { port, pid, method: "POST", path: POST_PATH, headers: { [API_KEY_HEADER]: API_KEY, "content-type": "application/json" }, body: POST_BODY },
  ping: { port, pid, method: "POST", path: MCP_PATH, headers: MCP_HEADERS, body: rpc("ping") },
  mcp: { port, pid, method: "POST", path: MCP_PATH, headers: MCP_HEADERS, body: rpc("tools/call", { name: "revenue", arguments: { region: "eu" } }) },
});

const servers: Array<{ variant: string; child: Parameters<typeof stopChild>[0]; targets: Record<string, Target> }> = [];
const us = new Map<string, number[]>();
try {
  for (const variant of variants) {
    const env = Object.fromEntries(variant.split(/\s+/).filter(Boolean).map((pair) => pair.split("=") as [string, string]));
    const port = await freePort();
    const started = await spawnBench(env["SERVER"] ?? process.env["SERVER"] ?? "servers/queryserve-full-mcp.ts", { ...env, PORT: String(port) });
    if (started.outcome.kind !== "ready") throw new Error(`${variant}: ${started.outcome.kind}`);
    servers.push({ variant, child: started.child, targets: targetsFor(port, started.child.pid ?? -1) });
  }
  for (const server of servers) for (const name of names) await runLoad(server.targets[name]!, { connections: 50, durationSec: 1 });
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        const run = await runLoad(server.targets[name]!, { connections: 50, durationSec: seconds });
        if (run.non2xx + run.errors > 0) throw new Error(`${server.variant} ${name}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        const key = `${server.variant || "-"} | ${name}`;
        us.set(key, [...(us.get(key) ?? []), run.serverUsPerReq]);
      }
    }
  }
} finally {
  for (const server of servers) await stopChild(server.child);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [key, values] of us) console.log(`${key.padEnd(40)} µs/req ${values.map((v) => v.toFixed(0)).join(" ")}  median ${median(values).toFixed(0)}`);
