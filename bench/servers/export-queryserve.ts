/**
 * The demo's `ordersExport` over DuckDB, served by queryserve (built dist/): every order of the range
 * streamed from DuckDB's result chunks through the demo's driver and the endpoint's output schema.
 * GET /bench/export-end answers when the last export's query ended (the driver's stream closed).
 */
import { type ServeHandler, startNodeServer } from "queryserve";
import { createAnalyticsApi } from "../../examples/analytics/api.js";
import { duckDbDriver } from "../../examples/analytics/duckdb.js";
import { createDb, type SqlDriver } from "../../examples/analytics/sql.js";
import { EXPORT_END_PATH, epochMs, exportEnds, openExportPool, verifyExportServer } from "../lib/exportBench.js";
import { runServer } from "../lib/serverMain.js";

void runServer({
  name: "export-queryserve",
  verify: verifyExportServer,
  start: async (port, hostname) => {
    const { pool, close } = await openExportPool();
    const driver = duckDbDriver(pool);
    const ends = exportEnds();
    const recorded: SqlDriver = {
      execute: driver.execute,
      stream: async function* (statement, signal) {
        const started = epochMs();
        let complete = false;
        try {
          yield* driver.stream(statement, signal);
          complete = true;
        } finally {
          ends.record({ started, ended: epochMs(), complete });
        }
      },
    };
    const api = createAnalyticsApi(createDb(recorded), { queryLogging: false, endpoints: ["ordersExport"] });
    const handler: ServeHandler = (request) =>
      request.path === EXPORT_END_PATH
        ? { status: 200, headers: { "content-type": "application/json" }, body: ends.json() }
        : api.handler(request);
    const server = await startNodeServer(handler, { port, hostname, handleSignals: false, quiet: true });
    return {
      stop: async () => {
        await server.stop();
        await api.dispose();
        await close();
      },
    };
  },
});
