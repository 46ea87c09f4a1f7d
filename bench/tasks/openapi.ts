/**
 * OpenAPI generation time for 1,000 endpoints, run by bench/run.ts in its own
 * process. Times defineServe with 1,000 queries, then buildOpenApiDocument on
 * the builder's endpoint list (first call, then the median of 5 more), and the
 * first and second GET of basePath/openapi.json on a started server.
 * Prints `result <json>` or `skip <reason>`.
 */
import { Schema } from "effect";
import { performance } from "node:perf_hooks";
import { BASE_PATH, LIMIT_MAX, LIMIT_MIN, REGIONS } from "../lib/fixture.js";
import { SkipServer } from "../lib/serverMain.js";
import { loadQueryserve, revenueQuery, startBuilder } from "../lib/queryserve.js";

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

/** The builder's endpoints, if it exposes them as `endpoints` or `queries` (array or record). */
const endpointList = (builder: unknown): unknown[] | undefined => {
  if (typeof builder !== "object" || builder === null) return undefined;
  for (const key of ["endpoints", "queries"]) {
    const value: unknown = Reflect.get(builder, key);
    if (Array.isArray(value)) return value;
    if (typeof value === "object" && value !== null) return Object.values(value);
  }
  return undefined;
};

const pathCount = (doc: unknown): number => {
  if (typeof doc !== "object" || doc === null) return 0;
  const paths: unknown = Reflect.get(doc, "paths");
  return typeof paths === "object" && paths !== null ? Object.keys(paths).length : 0;
};

const main = async (): Promise<void> => {
  const qs = await loadQueryserve();
  const shapes = [
    Schema.Struct({ region: Schema.Literal(...REGIONS) }),
    Schema.Struct({ region: Schema.Literal(...REGIONS), limit: Schema.optional(Schema.Int.pipe(Schema.between(LIMIT_MIN, LIMIT_MAX))) }),
    Schema.Struct({ from: Schema.String, to: Schema.String, granularity: Schema.Literal("day", "week", "month") }),
  ];
  const queries: Record<string, unknown> = {};
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
  const builder: unknown = qs.defineServe({ queries });
  const defineMs = performance.now() - t0;

  const result: Record<string, unknown> = { endpoints: ENDPOINTS, defineMs };

  const build = qs.buildOpenApiDocument;
  const list = endpointList(builder);
  if (build === undefined) result["directSkipped"] = "src/index.ts does not export buildOpenApiDocument";
  else if (list === undefined) result["directSkipped"] = "the builder exposes no endpoint list (endpoints/queries)";
  else {
    const t1 = performance.now();
    const doc = build(list);
    result["directFirstMs"] = performance.now() - t1;
    result["directPaths"] = pathCount(doc);
    const again: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      build(list);
      again.push(performance.now() - t);
    }
    result["directMedianMs"] = median(again);
  }

  try {
    const running = await startBuilder(builder, { port, hostname: host });
    try {
      const url = `http://${host}:${port}${BASE_PATH}/openapi.json`;
      for (const label of ["httpFirstMs", "httpSecondMs"]) {
        const t = performance.now();
        const response = await fetch(url);
        const text = await response.text();
        result[label] = performance.now() - t;
        if (response.status !== 200) {
          throw new Error(`GET ${BASE_PATH}/openapi.json answered ${response.status}: ${text.slice(0, 100)}`);
        }
        if (label === "httpFirstMs") {
          result["httpBytes"] = text.length;
          result["httpPaths"] = pathCount(JSON.parse(text));
        }
      }
    } finally {
      await running.stop();
    }
  } catch (error) {
    delete result["httpFirstMs"];
    delete result["httpSecondMs"];
    result["httpSkipped"] = error instanceof Error ? error.message : String(error);
  }
  if (result["directFirstMs"] === undefined && result["httpFirstMs"] === undefined) {
    throw new SkipServer(`no way to generate the document: ${String(result["directSkipped"])}; ${String(result["httpSkipped"])}`);
  }
  emit(`result ${JSON.stringify(result)}`);
  process.exit(0);
};

main().catch((error: unknown) => {
  const skip = error instanceof SkipServer;
  const message = error instanceof Error ? error.message : String(error);
  emit(`${skip ? "skip" : "fail"} ${message.replace(/\s+/g, " ")}`);
  process.exit(skip ? 3 : 1);
});
