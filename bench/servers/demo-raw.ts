/**
 * The limit for the demo endpoint: node:http with the API key, the dates and the tenant filter done
 * by hand, running the same metric. MODE=memo (default) keeps every answer in a Map forever (the
 * best a hand-written cache can do); MODE=query runs the DuckDB query for every request.
 */
import { openDemoDb, verifyDemoServer } from "../lib/demo.js";
import { demoRawListener } from "../lib/demoRawListener.js";
import { listenNodeServer, runServer } from "../lib/serverMain.js";

const memo = (process.env["MODE"] ?? "memo") === "memo";

void runServer({
  name: `demo-raw (${memo ? "memo" : "query"})`,
  verify: verifyDemoServer,
  start: async (port, hostname) => {
    const { db, close } = await openDemoDb();
    const server = await listenNodeServer(demoRawListener(db, memo), port, hostname);
    return {
      stop: async () => {
        await server.stop();
        await close();
      },
    };
  },
});
