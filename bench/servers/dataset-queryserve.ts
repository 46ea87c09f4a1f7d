/**
 * The demo's `orders` dataset over DuckDB, served by queryserve (built dist/) at
 * POST /api/analytics/datasets/orders, behind the demo's API keys and tenant. CACHE=off (default)
 * runs every query; CACHE=memory turns the result cache on, the dataset kept for a minute (cacheTtlMs).
 */
import { apiKeyAuth, defineServe } from "queryserve";
import { ordersDataset } from "../../examples/analytics/ordersDataset.js";
import { duckDbSqlExecutor } from "../../examples/analytics/sqlExecutor.js";
import { DATASET_PATH, serveWithPool, verifyDatasetServer } from "../lib/datasetBench.js";
import { DEMO_KEY_HEADER, demoKeys, openDemoPool } from "../lib/demo.js";
import { runServer } from "../lib/serverMain.js";

const cached = (process.env["CACHE"] ?? "off") === "memory";

void runServer({
  name: `dataset-queryserve (cache ${cached ? "memory" : "off"})`,
  verify: verifyDatasetServer(DATASET_PATH),
  start: async (port, hostname) => {
    const { pool, close } = await openDemoPool();
    const api = defineServe({
      queries: {},
      auth: apiKeyAuth({ header: DEMO_KEY_HEADER, keys: demoKeys }),
      tenant: { extract: (auth) => auth?.tenantId },
      datasets: { orders: cached ? { ...ordersDataset, cacheTtlMs: 60_000 } : ordersDataset },
      sql: duckDbSqlExecutor(pool),
      resultCache: cached,
      queryLogging: false,
    });
    return serveWithPool(api, close, port, hostname);
  },
});
