/**
 * The baseline of the cached dataset goal: node:http at the dataset's path, the API key, the body
 * and the tenant checked by hand, every answer kept in a Map forever (the best a hand-written cache
 * can do); a miss runs the hand-written SQL on the same DuckDB database.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { duckDbDriver } from "../../examples/analytics/duckdb.js";
import { DATASET_PATH, isQuestion, revenueByRegion, verifyDatasetServer } from "../lib/datasetBench.js";
import { DEMO_KEY_HEADER, demoKeys, openDemoPool } from "../lib/demo.js";
import { listenNodeServer, runServer } from "../lib/serverMain.js";

const BODY_LIMIT = 1024 * 1024;

const send = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

const readBody = (req: IncomingMessage, then: (body: string | undefined) => void): void => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  });
  req.on("end", () => then(size > BODY_LIMIT ? undefined : Buffer.concat(chunks).toString("utf8")));
};

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

void runServer({
  name: "dataset-raw (answers in a Map)",
  verify: verifyDatasetServer(DATASET_PATH),
  start: async (port, hostname) => {
    const { pool, close } = await openDemoPool();
    const driver = duckDbDriver(pool);
    const answers = new Map<string, string>();
    const server = await listenNodeServer(
      (req, res) => {
        if (req.url !== DATASET_PATH || req.method !== "POST") return send(res, 404, '{"error":"not found"}');
        const key = req.headers[DEMO_KEY_HEADER];
        const tenantId = typeof key === "string" ? demoKeys[key]?.tenantId : undefined;
        if (tenantId === undefined) return send(res, 401, '{"error":"unauthorized"}');
        readBody(req, (body) => {
          if (body === undefined) return send(res, 413, '{"error":"body too large"}');
          if (!isQuestion(parsed(body))) return send(res, 400, '{"error":"only revenue by region is answered here"}');
          const cacheKey = `${tenantId}\n${body}`;
          const known = answers.get(cacheKey);
          if (known !== undefined) return send(res, 200, known);
          revenueByRegion(driver, tenantId).then(
            (answer) => {
              const text = JSON.stringify(answer);
              answers.set(cacheKey, text);
              send(res, 200, text);
            },
            () => send(res, 500, '{"error":"query failed"}'),
          );
        });
      },
      port,
      hostname,
    );
    return {
      stop: async () => {
        await server.stop();
        await close();
      },
    };
  },
});
