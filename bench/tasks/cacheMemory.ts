/**
 * Memory of the result cache's memory store (run by bench/run.ts in its own process): 100,000
 * requests with distinct inputs through a cached endpoint whose results are about 1 KiB each, far
 * more than the store may keep, and the growth of RSS after a full GC against `maxBytes`.
 * Prints `result <json>` or `fail <reason>`.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { defineServe, type ServeRequest } from "queryserve";
import { envNumber } from "../lib/env.js";

const KEYS = 100_000;
const MAX_BYTES = Math.round(envNumber("BENCH_CACHE_MAX_BYTES", 32 * 1024 * 1024));
/**
 * Requests before the first measurement. The handler's own garbage grows V8's young generation
 * (up to its semi-space limit) over the first tens of thousands of requests whether or not anything
 * is cached (about 9 MiB of RSS with a store holding 3 entries): warmed up that far, the growth
 * measured is the store's.
 */
const WARMUP = Math.round(envNumber("BENCH_CACHE_WARMUP", 30_000));

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const emit = (line: string): void => void process.stdout.write(`${line}\n`);

const settle = async (): Promise<{ rss: number; heapUsed: number }> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
};

const main = async (): Promise<void> => {
  const rows = (id: string) => Array.from({ length: 12 }, (_, i) => ({ id, row: i, region: "eu", label: `item ${id}-${i}`, amount: i * 12.5 }));
  const api = defineServe({
    // The byte bound is the one under test: the entry bound is set out of its way.
    resultCache: { maxBytes: MAX_BYTES, maxEntries: 10 * KEYS },
    queries: { item: { cacheTtlMs: 3_600_000, query: ({ input }: { input: { id?: string } }) => rows(input.id ?? "") } },
  });
  const request = (id: number): ServeRequest => ({ method: "GET", path: "/api/analytics/item", query: { id: String(id) }, headers: {} });
  // Warm-up on inputs outside the measured range, then an empty store.
  for (let i = 0; i < WARMUP; i++) await api.handler(request(-1 - i));
  await api.cache.invalidate();
  const before = await settle();
  const started = performance.now();
  let resultBytes = 0;
  for (let i = 0; i < KEYS; i++) resultBytes += (await api.handler(request(i))).body?.length ?? 0;
  const ms = performance.now() - started;
  const after = await settle();
  const stats = await api.cache.stats();
  const growth = after.rss - before.rss;
  emit(
    `result ${JSON.stringify({
      keys: KEYS,
      warmup: WARMUP,
      maxBytes: MAX_BYTES,
      bytesOfResults: resultBytes,
      entries: stats.entries,
      storeBytes: stats.bytes,
      rssBefore: before.rss,
      rssAfter: after.rss,
      rssGrowth: growth,
      heapGrowth: after.heapUsed - before.heapUsed,
      growthVsMaxBytes: growth / MAX_BYTES,
      goal: "RSS growth ≤ maxBytes × 1.2",
      msPerInsert: ms / KEYS,
    })}`,
  );
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    emit(`fail ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")}`);
    process.exit(1);
  },
);
