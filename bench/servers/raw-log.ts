/**
 * A reference, not a peer: raw node:http (the same listener as servers/raw.ts) that also writes the
 * JSON line queryserve's `queryLogging: 'json'` writes for each request, formatted by hand, with
 * the cheapest unique ids, and written the cheapest way this bench knows: a turn's lines in one
 * `process.stdout.write` at the turn's end. The bench sends its stdout to /dev/null. Its ratio to
 * raw is the most a server that writes the line can reach on the box, whatever else it does.
 */
import { randomBytes } from "node:crypto";
import { rawListener } from "../lib/rawListener.js";
import { listenNodeServer, runServer } from "../lib/serverMain.js";

// Request ids as cheap as unique ids get: a random prefix of this process and a counter.
const idPrefix = randomBytes(8).toString("hex");
let requestCount = 0;
let pending: string[] = [];
let flushScheduled = false;
let lastMs = Number.NaN;
let lastTimestamp = "";

const flush = (): void => {
  flushScheduled = false;
  const text = `${pending.join("\n")}\n`;
  pending = [];
  process.stdout.write(text);
};

const logLine = (method: string, path: string, status: number, durationMs: number): void => {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTimestamp = new Date(now).toISOString();
  }
  const level = status < 400 ? "info" : "error";
  pending.push(
    `{"level":"${level}","msg":"${method} ${path}","requestId":"${idPrefix}-${++requestCount}","endpoint":"revenue","status":${status},` +
      `"durationMs":${Math.round(durationMs * 100) / 100},"timestamp":"${lastTimestamp}"}`,
  );
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flush);
};

void runServer({
  name: "raw-log",
  // Measured on the GET goal only, whose answer rawListener writes before it returns: the line then
  // has its status and duration. (A POST is answered after its body arrived, later than its line.)
  verify: { post: false, auth: false },
  // A reference that wrote nothing would claim a floor no logging server can reach.
  afterVerify: () => (requestCount === 0 ? "no log line was written" : undefined),
  start: (port, host) =>
    listenNodeServer((req, res) => {
      const startedAt = performance.now();
      rawListener(req, res);
      const url = req.url ?? "/";
      const query = url.indexOf("?");
      logLine(req.method ?? "GET", query === -1 ? url : url.slice(0, query), res.statusCode, performance.now() - startedAt);
    }, port, host),
});
