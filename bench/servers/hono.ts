/** Hono 4 on @hono/node-server, validated with hono's built-in `validator` middleware. */
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { validator } from "hono/validator";
import { GET_PATH, isRegion, revenueFor } from "../lib/fixture.js";
import { runServer } from "../lib/serverMain.js";

void runServer({
  name: "hono",
  verify: { post: false, auth: false },
  start: async (port, host) => {
    const app = new Hono();
    app.get(
      GET_PATH,
      validator("query", (value, c) => {
        const region = value["region"];
        if (!isRegion(region)) {
          return c.json({ error: { type: "VALIDATION_ERROR", message: "region must be one of eu, us, apac" } }, 400);
        }
        return { region };
      }),
      (c) => c.json(revenueFor(c.req.valid("query").region)),
    );
    const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s));
      s.once("error", reject);
    });
    return {
      stop: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server && typeof server.closeAllConnections === "function") {
            server.closeAllConnections();
          }
        }),
    };
  },
});
