/**
 * Cold start, run by bench/run.ts in a fresh `node` process on this file compiled to JavaScript
 * (bench/.build/coldstart.mjs; `queryserve` is the built dist/): import the server library, define
 * 100 queries, start on PORT, answer the first request (and check its body). Prints `result <json>`
 * with the phases in ms since process start and the RSS after the first answer, or `fail <reason>`.
 * COLD_TARGET=queryserve (default) | raw (node:http baseline: node alone).
 */
import { performance } from "node:perf_hooks";

const t0 = performance.now(); // ms since this process started (node + tsx boot before this line)

const port = Number(process.env["PORT"] ?? "3000");
const host = "127.0.0.1";
const QUERY_COUNT = 100;

const emit = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const main = async (): Promise<void> => {
  const { EXPECTED_GET_BODY, GET_QUERY, BASE_PATH, REGIONS, isRegion, revenueFor } = await import("../lib/fixture.js");
  const firstPath = `${BASE_PATH}/q0${GET_QUERY}`;
  let stop: () => Promise<void>;
  let tImport: number;
  let tDefine: number;
  let tListen: number;

  if (process.env["COLD_TARGET"] === "raw") {
    const { createServer } = await import("node:http");
    tImport = performance.now();
    const paths = new Set(Array.from({ length: QUERY_COUNT }, (_, i) => `${BASE_PATH}/q${i}`));
    tDefine = performance.now();
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const region = url.searchParams.get("region");
      if (!paths.has(url.pathname) || !isRegion(region)) {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(revenueFor(region)));
    });
    await new Promise<void>((resolve) => server.listen(port, host, () => resolve()));
    tListen = performance.now();
    stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  } else {
    const { defineServe } = await import("queryserve");
    // The Schema module, as an application imports what it uses (effect's index would load every module).
    const Schema = await import("effect/Schema");
    tImport = performance.now();
    const input = Schema.Struct({ region: Schema.Literal(...REGIONS) });
    const query = (args: { readonly input: typeof input.Type }) => revenueFor(args.input.region);
    const queries: Record<string, { inputSchema: typeof input; query: typeof query; summary: string; tags: string[] }> = {};
    for (let i = 0; i < QUERY_COUNT; i++) {
      queries[`q${i}`] = { inputSchema: input, query, summary: `Query ${i}`, tags: [`t${i % 10}`] };
    }
    const builder = defineServe({ queries });
    tDefine = performance.now();
    const running = await builder.start({ port, hostname: host });
    tListen = performance.now();
    stop = () => running.stop();
  }

  const response = await fetch(`http://${host}:${port}${firstPath}`);
  const body = await response.text();
  const tFirst = performance.now();
  const rssMiB = process.memoryUsage().rss / 1024 / 1024;
  await stop();
  if (response.status !== 200 || body !== EXPECTED_GET_BODY) {
    emit(`fail first request answered ${response.status} ${body.slice(0, 120)}`);
    process.exit(1);
  }
  emit(
    `result ${JSON.stringify({
      bootMs: t0,
      importMs: tImport - t0,
      defineMs: tDefine - tImport,
      listenMs: tListen - tDefine,
      firstRequestMs: tFirst - tListen,
      sinceProcessStartMs: tFirst,
      rssMiB,
    })}`,
  );
  process.exit(0);
};

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  emit(`fail ${message.replace(/\s+/g, " ")}`);
  process.exit(1);
});
