/**
 * node:http without sockets: each server (raw node:http and queryserve setups, the latter through
 * their own `start()`) is handed one in-memory connection (`server.emit("connection", duplex)`),
 * and the fixture's request is written into it one at a time. node:http parses it, builds
 * IncomingMessage/ServerResponse and writes the answer as it does on a socket; only the kernel's
 * loopback work is missing. It prints the CPU µs per request of each server, interleaved rounds,
 * median and best round, and the difference to raw: the part of the bench's "server CPU µs/req"
 * that is queryserve's own, measured in one process instead of across processes on a busy box.
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx bench/tasks/listenerLoop.ts [get|post|mcp]
 * SETUPS (default raw,bare,full; also full-log, full-metrics; `mcp`, a tools/call of the GET's endpoint, needs SETUPS=full-mcp),
 * N requests per round (default 5000), ROUNDS (default 10).
 */
import { createServer, type Server } from "node:http";
import { API_KEY, API_KEY_HEADER, GET_URL_PATH, POST_BODY, POST_PATH } from "../lib/fixture.js";
import { MCP_HEADERS, MCP_PATH, TOOLS_CALL } from "./mcp.js";
import { defineSetup, type Setup } from "../lib/queryserve.js";
import { cpuPerRequest, MemoryConnection } from "../lib/memoryConnection.js";
import { rawListener } from "../lib/rawListener.js";
import { median } from "../lib/report.js";

// The figures go to stdout: the log setup does not write its lines there, unless QS_LOG_MODE says so.
process.env["QS_LOG_MODE"] ??= "sink";
const SETUP_NAMES: ReadonlyArray<string> = ["raw", "bare", "full", "full-log", "full-metrics", "full-mcp"];

const mode = process.argv[2] ?? "get";
if (mode !== "get" && mode !== "post" && mode !== "mcp") throw new Error(`unknown mode ${mode}`);
const mcpHeaders = Object.entries(MCP_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join("");
const requestBytes = mode === "mcp"
  ? `POST ${MCP_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${mcpHeaders}content-length: ${Buffer.byteLength(TOOLS_CALL)}\r\n\r\n${TOOLS_CALL}`
  : mode === "post"
  ? `POST ${POST_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${API_KEY_HEADER}: ${API_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(POST_BODY)}\r\n\r\n${POST_BODY}`
  : `GET ${GET_URL_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${API_KEY_HEADER}: ${API_KEY}\r\n\r\n`;
const names = (process.env["SETUPS"] ?? "raw,bare,full").split(",").map((name) => name.trim());
const perRound = Number(process.env["N"] ?? "5000");
const rounds = Number(process.env["ROUNDS"] ?? "10");

const serverOf = async (name: string): Promise<Server> => {
  if (!SETUP_NAMES.includes(name)) throw new Error(`unknown setup ${name} (${SETUP_NAMES.join(", ")})`);
  if (name === "raw") return createServer(rawListener);
  // The setup's own server, with its options; it also listens on a loopback port nobody uses.
  const running = await defineSetup(name as Setup).start({ port: 0, hostname: "127.0.0.1", handleSignals: false });
  if (running.server === undefined) throw new Error("no server in this process");
  return running.server;
};

const peers: Array<{ name: string; server: Server; connection: MemoryConnection; us: number[] }> = [];
for (const name of names) {
  const server = await serverOf(name);
  const connection = new MemoryConnection();
  server.emit("connection", connection);
  peers.push({ name, server, connection, us: [] });
}

// The loop below only ever waits on microtasks, so nothing that needs the event loop (the lazy import
// of prom-client with `metrics`, of the MCP SDK) could finish once it runs: let them finish first.
await new Promise((resolve) => setTimeout(resolve, 1000));
for (const peer of peers) await cpuPerRequest(peer.connection, requestBytes, perRound); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const peer of round % 2 === 0 ? peers : [...peers].reverse()) peer.us.push(await cpuPerRequest(peer.connection, requestBytes, perRound));
}
const base = peers.find((peer) => peer.name === "raw");
for (const { name, us } of peers) {
  const versus = base === undefined || name === "raw"
    ? ""
    : `  queryserve's own: +${(median(us) - median(base.us)).toFixed(1)} µs (median), +${(Math.min(...us) - Math.min(...base.us)).toFixed(1)} µs (best)`;
  // stdout directly: in QS_LOG_MODE=sink the full-log setup sends console.log to its sink.
  process.stdout.write(`${mode.toUpperCase().padEnd(4)} ${name.padEnd(9)} ${median(us).toFixed(1).padStart(5)} µs/req median, ${Math.min(...us).toFixed(1).padStart(5)} best${versus}\n`);
}
for (const { connection } of peers) connection.destroy();
process.exit(0);
