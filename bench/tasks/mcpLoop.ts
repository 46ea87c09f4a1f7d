/**
 * MCP without sockets: calls the handler of the "full-mcp" setup in a loop with one `tools/call`
 * (or `ping`, or the plain GET of the same endpoint) and prints the CPU µs per call, for profiling
 * and quick A/B of the MCP path on a busy box:
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx bench/tasks/mcpLoop.ts [call|ping|get]
 * CALLS (default 200000); CONCURRENCY requests in flight at once (default 1).
 */
import { API_KEY, API_KEY_HEADER, BASE_PATH, GET_PATH } from "../lib/fixture.js";
import type { ServeRequest } from "queryserve";
import { defineSetup } from "../lib/queryserve.js";

const kind = process.argv[2] ?? "call";
if (kind !== "call" && kind !== "ping" && kind !== "get") throw new Error(`unknown kind ${kind}`);
const calls = Number(process.env["CALLS"] ?? "200000");
const concurrency = Number(process.env["CONCURRENCY"] ?? "1");
const handler = defineSetup("full-mcp").handler;
const message = kind === "ping"
  ? { jsonrpc: "2.0", id: 1, method: "ping" }
  : { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "revenue", arguments: { region: "eu" } } };
const request: ServeRequest = kind === "get"
  ? { method: "GET", path: GET_PATH, query: { region: "eu" }, headers: { host: "127.0.0.1", [API_KEY_HEADER]: API_KEY, accept: "*/*" } }
  : {
      method: "POST",
      path: `${BASE_PATH}/mcp`,
      query: {},
      headers: {
        host: "127.0.0.1",
        [API_KEY_HEADER]: API_KEY,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      // As the Node adapter hands it over: text.
      body: JSON.stringify(message),
    };

const one = async (): Promise<number> => {
  const answer = await handler(request);
  if (!("status" in answer) || answer.status !== 200 || answer.body === null || answer.body === undefined) throw new Error(`answered ${JSON.stringify(answer)}`);
  return answer.body.length;
};

const run = async (n: number): Promise<number> => {
  let bytes = 0;
  const lane = async (count: number) => {
    for (let i = 0; i < count; i++) bytes += await one();
  };
  await Promise.all(Array.from({ length: concurrency }, () => lane(Math.ceil(n / concurrency))));
  return bytes;
};

await run(Math.min(calls, 20_000));
const before = process.cpuUsage();
await run(calls);
const used = process.cpuUsage(before);
console.log(`mcp ${kind} (concurrency ${concurrency}): ${((used.user + used.system) / calls).toFixed(2)} CPU µs per call`);
