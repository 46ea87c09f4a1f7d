/**
 * A cache hit of the demo without sockets: raw node:http serving `revenueByRegion` from a Map (as
 * bench/servers/demo-raw.ts MODE=memo) and the queryserve demo with the result cache on (as
 * bench/servers/demo-queryserve.ts), each handed one in-memory connection. The same request is
 * written into each, one at a time, after a first one filled the caches: every measured answer is a
 * hit. Prints the CPU µs per request of each, interleaved rounds, median and best round, and
 * queryserve's own part (the difference). cacheThroughput's "server CPU µs/req" minus the kernel.
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx bench/tasks/cacheHitLoop.ts
 * N requests per round (default 5000), ROUNDS (default 10), BENCH_DEMO_ROWS (default 200,000);
 * ONLY=cached (or raw-memo) runs one of them (for `node --cpu-prof`).
 */
import { createServer, type Server } from "node:http";
import { startNodeServer } from "queryserve";
import { createAnalyticsApi } from "../../examples/analytics/api.js";
import { DEMO_KEY, DEMO_KEY_HEADER, DEMO_URL_PATH, openDemoDb } from "../lib/demo.js";
import { demoRawListener } from "../lib/demoRawListener.js";
import { cpuPerRequest, MemoryConnection } from "../lib/memoryConnection.js";
import { median } from "../lib/report.js";

const perRound = Number(process.env["N"] ?? "5000");
const rounds = Number(process.env["ROUNDS"] ?? "10");
const requestBytes = `GET ${DEMO_URL_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${DEMO_KEY_HEADER}: ${DEMO_KEY}\r\n\r\n`;

const { db, close } = await openDemoDb();
const api = createAnalyticsApi(db, { queryLogging: false, endpoints: ["revenueByRegion"], resultCache: true });
// Its own server and options; it also listens on a loopback port nobody uses.
const queryserve = await startNodeServer(api.handler, { port: 0, hostname: "127.0.0.1", handleSignals: false });
if (queryserve.server === undefined) throw new Error("no server in this process");
const servers: ReadonlyArray<readonly [string, Server]> = [
  ["raw-memo", createServer(demoRawListener(db, true))],
  ["cached", queryserve.server],
];
const only = process.env["ONLY"];
const peers = servers.filter(([name]) => only === undefined || name === only).map(([name, server]) => {
  const connection = new MemoryConnection();
  server.emit("connection", connection);
  return { name, connection, us: [] as number[] };
});

for (const peer of peers) await cpuPerRequest(peer.connection, requestBytes, perRound); // fills the caches, warms up
for (let round = 0; round < rounds; round++) {
  for (const peer of round % 2 === 0 ? peers : [...peers].reverse()) peer.us.push(await cpuPerRequest(peer.connection, requestBytes, perRound));
}
const raw = peers.find((peer) => peer.name === "raw-memo");
for (const { name, us } of peers) {
  const own = raw === undefined || name === raw.name
    ? ""
    : `  queryserve's own: +${(median(us) - median(raw.us)).toFixed(1)} µs (median), +${(Math.min(...us) - Math.min(...raw.us)).toFixed(1)} µs (best)`;
  process.stdout.write(`${name.padEnd(9)} ${median(us).toFixed(1).padStart(5)} µs/req median, ${Math.min(...us).toFixed(1).padStart(5)} best${own}\n`);
}
for (const { connection } of peers) connection.destroy();
await queryserve.stop();
await api.dispose();
await close();
process.exit(0);
