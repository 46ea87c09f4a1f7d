/**
 * OpenAPI generation time for 1,000 endpoints, run by bench/run.ts in its own
 * process. Times defineServe with 1,000 queries, then buildOpenApiDocument on
 * the builder's endpoint list (first call, then the median of 5 more), and the
 * first and second GET of basePath/openapi.json on a started server.
 * Prints `result <json>` or `fail <reason>`.
 */
import { Schema } from "effect";
import { performance } from "node:perf_hooks";
import { buildOpenApiDocument, defineServe, type ServeQueriesMap } from "queryserve";
import { BASE_PATH, LIMIT_MAX, LIMIT_MIN, REGIONS } from "../lib/fixture.js";
import { revenueQuery } from "../lib/queryserve.js";

const ENDPOINTS = 1000;
const port = Number(process.env["PORT"] ?? "3000");
const host = "127.0.0.1";

const emit = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const pathCount = (doc: unknown): number => {
  if (typeof doc !== "object" || doc === null) return 0;
  const paths: unknown = Reflect.get(doc, "paths");
  return typeof paths === "object" && paths !== null ? Object.keys(paths).length : 0;
};

const main = async (): Promise<void> => {
  const shapes = [
    Schema.Struct({ region: Schema.Literal(...REGIONS) }),
    Schema.Struct({ region: Schema.Literal(...REGIONS), limit: Schema.optional(Schema.Int.pipe(Schema.between(LIMIT_MIN, LIMIT_MAX))) }),
    Schema.Struct({ from: Schema.String, to: Schema.String, granularity: Schema.Literal("day", "week", "month") }),
  ];
  const queries: Record<string, ServeQueriesMap[string]> = {};
  for (let i = 0; i < ENDPOINTS; i++) {
    queries[`metric${i}`] = {
      method: i % 4 === 3 ? "POST" : "GET",
      inputSchema: shapes[i % shapes.length],
      query: revenueQuery,
      summary: `Metric ${i}`,
      description: `Generated endpoint number ${i} for the OpenAPI benchmark.`,
      tags: [`group${i % 20}`],
    };
  }
  const t0 = performance.now();
  const builder = defineServe({ queries });
  const result: Record<string, unknown> = { endpoints: ENDPOINTS, defineMs: performance.now() - t0 };

  const endpoints = builder.describe();
  const t1 = performance.now();
  result["directPaths"] = pathCount(buildOpenApiDocument(endpoints));
  result["directFirstMs"] = performance.now() - t1;
  const again: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    buildOpenApiDocument(endpoints);
    again.push(performance.now() - t);
  }
  result["directMedianMs"] = median(again);

  const running = await builder.start({ port, hostname: host });
  try {
    const url = `http://${host}:${port}${BASE_PATH}/openapi.json`;
    for (const label of ["httpFirstMs", "httpSecondMs"]) {
      const t = performance.now();
      const response = await fetch(url);
      const text = await response.text();
      result[label] = performance.now() - t;
      if (response.status !== 200) throw new Error(`GET ${BASE_PATH}/openapi.json answered ${response.status}: ${text.slice(0, 100)}`);
      if (label === "httpFirstMs") {
        result["httpBytes"] = text.length;
        result["httpPaths"] = pathCount(JSON.parse(text));
      }
    }
  } finally {
    await running.stop();
  }
  emit(`result ${JSON.stringify(result)}`);
  process.exit(0);
};

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  emit(`fail ${message.replace(/\s+/g, " ")}`);
  process.exit(1);
});
