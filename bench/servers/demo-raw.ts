/**
 * The limit for the demo endpoint: node:http with the API key, the dates and the tenant filter done
 * by hand, running the same metric. MODE=memo (default) keeps every answer in a Map forever (the
 * best a hand-written cache can do); MODE=query runs the DuckDB query for every request.
 */
import { createServer, type ServerResponse } from "node:http";
import { revenueByRegion } from "../../examples/analytics/metrics.js";
import { DEMO_KEY_HEADER, DEMO_PATH, demoKeys, openDemoDb, tenantDb, verifyDemoServer } from "../lib/demo.js";
import { runServer } from "../lib/serverMain.js";

const memo = (process.env["MODE"] ?? "memo") === "memo";
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (value: string | null): value is string => value !== null && DAY.test(value) && !Number.isNaN(Date.parse(value));

const send = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

void runServer({
  name: `demo-raw (${memo ? "memo" : "query"})`,
  verify: verifyDemoServer,
  start: async (port, hostname) => {
    const { db, close } = await openDemoDb();
    const answers = new Map<string, string>();
    const server = createServer((req, res) => {
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      if ((q === -1 ? url : url.slice(0, q)) !== DEMO_PATH) return send(res, 404, '{"error":"not found"}');
      const key = req.headers[DEMO_KEY_HEADER];
      const tenantId = typeof key === "string" ? demoKeys[key]?.tenantId : undefined;
      if (tenantId === undefined) return send(res, 401, '{"error":"unauthorized"}');
      const params = new URLSearchParams(q === -1 ? "" : url.slice(q + 1));
      const from = params.get("from");
      const to = params.get("to");
      if (!isDay(from) || !isDay(to)) return send(res, 400, '{"error":"from and to must be dates"}');
      const cacheKey = `${tenantId}|${from}|${to}`;
      const known = memo ? answers.get(cacheKey) : undefined;
      if (known !== undefined) return send(res, 200, known);
      revenueByRegion(tenantDb(db, tenantId), { from, to }).then(
        (rows) => {
          const body = JSON.stringify(rows);
          if (memo) answers.set(cacheKey, body);
          send(res, 200, body);
        },
        () => send(res, 500, '{"error":"query failed"}'),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, hostname, () => resolve());
    });
    return {
      stop: async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await close();
      },
    };
  },
});
