/**
 * The baseline of the uncached dataset goal: the same question as a hand-written queryserve endpoint
 * (POST /api/analytics/revenueByRegion, its body checked by a schema) running hand-written SQL on
 * a DuckDB database, pool, API keys and tenant config built as servers/dataset-queryserve.ts builds them. No cache.
 */
import * as Schema from "effect/Schema";
import { apiKeyAuth, defineServe, type ServeContext } from "queryserve";
import { duckDbDriver } from "../../examples/analytics/duckdb.js";
import { ENDPOINT_PATH, revenueByRegion, serveWithPool, verifyDatasetServer } from "../lib/datasetBench.js";
import { DEMO_KEY_HEADER, demoKeys, openDemoPool } from "../lib/demo.js";
import { runServer } from "../lib/serverMain.js";

const Question = Schema.Struct({
  dimensions: Schema.Tuple(Schema.Literal("region")),
  measures: Schema.Tuple(Schema.Literal("revenue")),
});

void runServer({
  name: "dataset-endpoint (hand-written SQL)",
  verify: verifyDatasetServer(ENDPOINT_PATH),
  start: async (port, hostname) => {
    const { pool, close } = await openDemoPool();
    const driver = duckDbDriver(pool);
    const api = defineServe({
      queries: {
        revenueByRegion: {
          method: "POST",
          inputSchema: Question,
          query: ({ ctx }: { readonly ctx: ServeContext }) => {
            if (ctx.tenantId === null) throw new Error("no tenant"); // every demo key has one
            return revenueByRegion(driver, ctx.tenantId, ctx.signal);
          },
        },
      },
      auth: apiKeyAuth({ header: DEMO_KEY_HEADER, keys: demoKeys }),
      tenant: { extract: (auth) => auth?.tenantId },
      queryLogging: false,
    });
    return serveWithPool(api, close, port, hostname);
  },
});
