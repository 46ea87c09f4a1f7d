/**
 * @effect/platform HttpApi on NodeHttpServer: one group, one GET endpoint whose
 * urlParams are a Schema (a bad value is a 400 HttpApiDecodeError), success
 * encoded through a Struct schema, as an Effect user would write it.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform";
import { NodeHttpServer } from "@effect/platform-node";
import { Effect, Exit, Layer, Schema, Scope } from "effect";
import { createServer } from "node:http";
import { GET_PATH, REGIONS, revenueFor } from "../lib/fixture.js";
import { runServer } from "../lib/serverMain.js";

const Region = Schema.Literal(...REGIONS);

const MonthRevenue = Schema.Struct({
  month: Schema.String,
  revenue: Schema.Number,
  orders: Schema.Number,
});

const Revenue = Schema.Struct({
  region: Region,
  currency: Schema.String,
  total: Schema.Number,
  months: Schema.Array(MonthRevenue),
});

const Analytics = HttpApiGroup.make("analytics").add(
  HttpApiEndpoint.get("revenue", GET_PATH)
    .setUrlParams(Schema.Struct({ region: Region }))
    .addSuccess(Revenue),
);

const Api = HttpApi.make("bench").add(Analytics);

const AnalyticsLive = HttpApiBuilder.group(Api, "analytics", (handlers) =>
  handlers.handle("revenue", ({ urlParams }) => Effect.succeed(revenueFor(urlParams.region))),
);

void runServer({
  name: "effect",
  verify: { post: false, auth: false },
  start: async (port, host) => {
    const ServerLive = HttpApiBuilder.serve().pipe(
      Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(AnalyticsLive))),
      Layer.provide(NodeHttpServer.layer(createServer, { port, host })),
    );
    const scope = Effect.runSync(Scope.make());
    // Building the layer listens and forks the serving fiber; closing the scope stops it.
    await Effect.runPromise(Layer.buildWithScope(ServerLive, scope));
    return { stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) };
  },
});
