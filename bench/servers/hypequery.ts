/**
 * @hypequery/serve (0.17.x): a query built with initServe's `query({ input, query })`
 * (zod 3 input schema; the inline `queries: { revenue: { inputSchema, query } }` form
 * loses contextual typing of `input`), passed to defineServe and served by its
 * own node helper (startNodeServer). Queries are registered at
 * basePath + "/queries/<key>" by default, so the endpoint is mounted on the
 * shared path with api.route("/revenue", …).
 */
import { defineServe, initServe, startNodeServer } from "@hypequery/serve";
// @hypequery/serve 0.17 is typed against its own nested zod 3.25 (package.json overrides
// it), and its .d.ts files see that zod through the "types" condition, i.e. index.d.cts.
// Neither the top-level zod 4 ("zod/v3") nor the nested ESM entry's types unify with its
// generics (TS2589 / not assignable), so import the nested CommonJS entry, whose types
// are the ones hypequery's declarations use. At run time hypequery only calls the
// schema's own methods (safeParse, _def), so the CJS instance behaves the same.
import { z } from "../../node_modules/@hypequery/serve/node_modules/zod/index.cjs";
import { BASE_PATH, GET_PATH, REGIONS, revenueFor } from "../lib/fixture.js";
import { runServer } from "../lib/serverMain.js";

void runServer({
  name: "hypequery",
  verify: { post: false, auth: false },
  start: async (port, host) => {
    const { query } = initServe({ basePath: BASE_PATH });
    const revenue = query({
      input: z.object({ region: z.enum(REGIONS) }),
      query: async ({ input }) => revenueFor(input.region),
    });
    const api = defineServe({
      basePath: BASE_PATH,
      docs: { enabled: false },
      openapi: { enabled: false },
      queries: { revenue },
    });
    api.route(GET_PATH.slice(BASE_PATH.length), api.queries.revenue);
    const { stop } = await startNodeServer(api.handler, { port, hostname: host, quiet: true });
    return { stop };
  },
});
