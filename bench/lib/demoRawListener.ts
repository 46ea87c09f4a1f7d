/**
 * The raw node:http listener of the demo endpoint (bench/servers/demo-raw.ts, tasks/cacheHitLoop.ts):
 * the API key, the dates and the tenant filter done by hand, running the same metric. With `memo`
 * every answer is kept in a Map forever (the best a hand-written cache can do); without, the DuckDB
 * query runs for every request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { revenueByRegion } from "../../examples/analytics/metrics.js";
import type { Db } from "../../examples/analytics/sql.js";
import { DEMO_KEY_HEADER, DEMO_PATH, demoKeys, tenantDb } from "./demo.js";

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (value: string | null): value is string => value !== null && DAY.test(value) && !Number.isNaN(Date.parse(value));

const send = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

export const demoRawListener = (db: Db, memo: boolean): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const answers = new Map<string, string>();
  return (req, res) => {
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
  };
};
