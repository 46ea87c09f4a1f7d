/**
 * The analytics demo's `revenueByRegion` endpoint over DuckDB, served by queryserve (built dist/).
 * CACHE=memory (default) | redis (REDIS_URL) | off chooses the result cache. GET /bench/stats
 * answers the cache's counts: `misses` is how many times the handler ran.
 */
import { redisResultCacheStore, type ServeHandler, startNodeServer } from "queryserve";
import { createAnalyticsApi } from "../../examples/analytics/api.js";
import { DEMO_STATS_PATH, openDemoDb, verifyDemoServer } from "../lib/demo.js";
import { runServer } from "../lib/serverMain.js";

const mode = process.env["CACHE"] ?? "memory";
const redisUrl = process.env["REDIS_URL"] ?? "";
const resultCache = mode === "off" ? false : mode === "redis" ? { store: redisResultCacheStore({ url: redisUrl }) } : true;

void runServer({
  name: `demo-queryserve (cache ${mode})`,
  verify: verifyDemoServer,
  start: async (port, hostname) => {
    const { db, close } = await openDemoDb();
    const api = createAnalyticsApi(db, { queryLogging: false, endpoints: ["revenueByRegion"], resultCache });
    const handler: ServeHandler = (request) =>
      request.path === DEMO_STATS_PATH
        ? api.cache.stats().then((stats) => ({ status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(stats) }))
        : api.handler(request);
    const server = await startNodeServer(handler, { port, hostname, handleSignals: false });
    return {
      stop: async () => {
        await server.stop();
        await api.dispose();
        await close();
      },
    };
  },
});
