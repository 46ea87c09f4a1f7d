/**
 * The baseline of the export: node:http streaming the same DuckDB result as CSV by hand. The key
 * and tenant checked by hand, the export's statement run on a pooled connection as a streaming
 * result, each chunk's columns written as CSV lines, the next chunk fetched once the socket has
 * drained; a client that leaves ends the loop. GET /bench/export-end as in export-queryserve.ts.
 */
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import type { ServerResponse } from "node:http";
import { DEMO_KEY_HEADER, demoKeys } from "../lib/demo.js";
import { CSV_HEADER, EXPORT_END_PATH, epochMs, exportEnds, openExportPool, verifyExportServer } from "../lib/exportBench.js";
import { listenNodeServer, runServer } from "../lib/serverMain.js";

const EXPORT_PATH = "/api/analytics/ordersExport.csv";
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const SQL = `SELECT o.order_id, o.day, o.region, p.name AS product, o.quantity, o.amount
  FROM orders o JOIN products p ON p.product_id = o.product_id AND p.tenant_id = o.tenant_id
  WHERE o.tenant_id = $1 AND o.day >= CAST($2 AS DATE) AND o.day <= CAST($3 AS DATE)
  ORDER BY o.order_id`;

const field = (value: DuckDBValue): string => {
  const text = value === null ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

const send = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
};

/** Resolves once the socket takes more, or the client has gone. */
const drained = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });

const exportCsv = async (connection: DuckDBConnection, params: ReadonlyArray<string>, res: ServerResponse): Promise<boolean> => {
  const result = await connection.stream(SQL, [...params]);
  res.writeHead(200, { "content-type": "text/csv; charset=utf-8" });
  res.write(`${CSV_HEADER}\r\n`);
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    if (res.destroyed) return false;
    // By column, as the demo's driver reads a chunk: getColumns() is DuckDB's cheapest way out.
    const columns = chunk.getColumns();
    let text = "";
    for (let i = 0; i < chunk.rowCount; i++) {
      let line = field(columns[0]![i]!);
      for (let c = 1; c < columns.length; c++) line += "," + field(columns[c]![i]!);
      text += line + "\r\n";
    }
    if (!res.write(text)) await drained(res);
  }
  res.end();
  return true;
};

void runServer({
  name: "export-raw (node:http, CSV by hand)",
  verify: verifyExportServer,
  start: async (port, hostname) => {
    const { pool, close } = await openExportPool();
    const ends = exportEnds();
    const server = await listenNodeServer(
      (req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost");
        if (url.pathname === EXPORT_END_PATH) return send(res, 200, ends.json());
        if (url.pathname !== EXPORT_PATH) return send(res, 404, '{"error":"not found"}');
        const key = req.headers[DEMO_KEY_HEADER];
        const tenantId = typeof key === "string" ? demoKeys[key]?.tenantId : undefined;
        if (tenantId === undefined) return send(res, 401, '{"error":"unauthorized"}');
        const from = url.searchParams.get("from") ?? "";
        const to = url.searchParams.get("to") ?? "";
        if (!DAY.test(from) || !DAY.test(to)) return send(res, 400, '{"error":"from and to are days"}');
        const started = epochMs();
        pool
          .use((connection) => exportCsv(connection, [tenantId, from, to], res))
          .then(
            (complete) => ends.record({ started, ended: epochMs(), complete }),
            () => (res.headersSent ? res.destroy() : send(res, 500, '{"error":"query failed"}')),
          );
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
