/** Fastify 5 with JSON-schema routes (querystring / body schema, validated by ajv). */
import Fastify from "fastify";
import { GET_PATH, LIMIT_MAX, LIMIT_MIN, POST_PATH, REGIONS, reportFor, revenueFor, type Region } from "../lib/fixture.js";
import { runServer } from "../lib/serverMain.js";

void runServer({
  name: "fastify",
  verify: { post: true, auth: false },
  start: async (port, host) => {
    const app = Fastify({ logger: false });
    app.get<{ Querystring: { region: Region } }>(
      GET_PATH,
      {
        schema: {
          querystring: {
            type: "object",
            properties: { region: { type: "string", enum: [...REGIONS] } },
            required: ["region"],
          },
        },
      },
      async (request) => revenueFor(request.query.region),
    );
    app.post<{ Body: { region: Region; limit: number } }>(
      POST_PATH,
      {
        schema: {
          body: {
            type: "object",
            properties: {
              region: { type: "string", enum: [...REGIONS] },
              limit: { type: "integer", minimum: LIMIT_MIN, maximum: LIMIT_MAX },
            },
            required: ["region", "limit"],
          },
        },
      },
      async (request) => reportFor(request.body.region, request.body.limit),
    );
    await app.listen({ port, host });
    return { stop: () => app.close() };
  },
});
