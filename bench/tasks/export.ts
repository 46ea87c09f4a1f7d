/**
 * The `export` section: one tenant's orders of a year (about 400,000 rows at the default
 * BENCH_EXPORT_ROWS) exported as CSV from DuckDB by queryserve (the demo's `ordersExport`) and by a
 * hand-written node:http server streaming the same result (servers/export-raw.ts). Both servers run
 * at once, each in its own process; the exports alternate between them, one at a time. Per export:
 * - time to first byte and throughput (rows/s from the request to the last byte);
 * - the server's RSS growth: its highest reading while the export runs, less its reading just before;
 * - then a client that reads the first chunk and leaves (closes its socket): the time from then to
 *   the end of the server's database query (its stream closed), as the server records it.
 * Env: BENCH_EXPORT_ROUNDS (default 3), BENCH_EXPORT_ROWS (default 800,000 demo orders).
 */
import type { ChildProcess } from "node:child_process";
import { request } from "node:http";
import { freePort, spawnBench, stopChild, treeRssMiB } from "../lib/children.js";
import { envNumber } from "../lib/env.js";
import { EXPORT_END_PATH, EXPORT_HEADERS, EXPORT_PATH, epochMs, type ExportEnd } from "../lib/exportBench.js";
import type { TaskResult } from "../lib/report.js";

const GOALS = { rssGrowthMiB: 64, throughputRatio: 0.8, leaveToEndMs: 100 } as const;
const RSS_SAMPLE_MS = 20;

interface Side {
  readonly name: string;
  readonly file: string;
}

const SIDES: ReadonlyArray<Side> = [
  { name: "queryserve", file: "servers/export-queryserve.ts" },
  { name: "raw node:http", file: "servers/export-raw.ts" },
];

interface FullExport {
  readonly rows: number;
  readonly bytes: number;
  readonly ttfbMs: number;
  readonly totalMs: number;
  readonly rssGrowthMiB: number;
}

/** GETs the export, reading every byte as it comes; counts lines (less the header) while sampling the server's RSS. */
const fullExport = (port: number, pid: number): Promise<FullExport> =>
  new Promise((resolve, reject) => {
    const before = treeRssMiB(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, treeRssMiB(pid))), RSS_SAMPLE_MS);
    const sent = performance.now();
    let firstByte: number | undefined;
    let bytes = 0;
    let lines = 0;
    const req = request({ host: "127.0.0.1", port, path: EXPORT_PATH, headers: EXPORT_HEADERS }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`export answered ${res.statusCode}`));
      res.on("data", (chunk: Buffer) => {
        firstByte ??= performance.now();
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
      });
      res.on("end", () => {
        clearInterval(sampler);
        peak = Math.max(peak, treeRssMiB(pid));
        const ended = performance.now();
        resolve({ rows: lines - 1, bytes, ttfbMs: (firstByte ?? ended) - sent, totalMs: ended - sent, rssGrowthMiB: peak - before });
      });
      res.on("error", reject);
    });
    req.on("error", (error) => {
      clearInterval(sampler);
      reject(error);
    });
    req.end();
  });

const lastEnd = async (port: number): Promise<ExportEnd | null> =>
  (await (await fetch(`http://127.0.0.1:${port}${EXPORT_END_PATH}`)).json()) as ExportEnd | null;

/** Starts the export, reads its first chunk, closes the socket; the ms from then to the server's query end. */
const leaveEarly = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const sent = epochMs();
    const req = request({ host: "127.0.0.1", port, path: EXPORT_PATH, headers: EXPORT_HEADERS }, (res) => {
      res.once("data", () => {
        const left = epochMs();
        req.destroy();
        const poll = async (): Promise<void> => {
          const until = performance.now() + 10_000;
          for (;;) {
            const end = await lastEnd(port);
            if (end !== null && end.started >= sent - 1) {
              if (end.complete) throw new Error("the export ran to its end: the client left too late to measure");
              return resolve(end.ended - left);
            }
            if (performance.now() > until) throw new Error("the server recorded no end of the query within 10 s");
            await new Promise((wait) => setTimeout(wait, 5));
          }
        };
        poll().catch(reject);
      });
    });
    req.on("error", (error) => (error.message === "socket hang up" ? undefined : reject(error)));
    req.end();
  });

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
};

const range = (values: ReadonlyArray<number>, digits = 0): string =>
  values.length === 0 ? "–" : `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

interface SideSummary {
  readonly rowsPerSec: number;
  readonly rowsPerSecRange: string;
  readonly ttfbMs: number;
  readonly ttfbMsRange: string;
  readonly rssGrowthMiB: number;
  readonly rssGrowthMiBRange: string;
  readonly leaveToEndMs: number;
  readonly leaveToEndMsRange: string;
  readonly mib: number;
}

interface ExportSummary {
  readonly rows: number;
  readonly rounds: number;
  readonly throughputRatio: number;
  readonly throughputRatioRange: string;
  readonly queryserve: SideSummary;
  readonly raw: SideSummary;
}

interface SideFigures {
  readonly exports: Array<FullExport>;
  readonly leaveToEndMs: Array<number>;
}

export interface ExportOptions {
  readonly log: (line: string) => void;
}

export const runExportTask = async ({ log }: ExportOptions): Promise<TaskResult> => {
  const rounds = Math.round(envNumber("BENCH_EXPORT_ROUNDS", 3));
  const live: Array<{ side: Side; child: ChildProcess; port: number; figures: SideFigures }> = [];
  try {
    for (const side of SIDES) {
      const port = await freePort();
      const started = await spawnBench(side.file, { PORT: String(port) }, 180_000);
      if (started.outcome.kind !== "ready") {
        return { status: "failed", reason: `${side.name}: ${started.outcome.kind === "fail" ? started.outcome.reason : started.outcome.kind}` };
      }
      live.push({ side, child: started.child, port, figures: { exports: [], leaveToEndMs: [] } });
    }
    // A warm-up export each: DuckDB's buffers and the JIT settle before RSS and time are read.
    for (const { side, child, port } of live) {
      const warm = await fullExport(port, child.pid!);
      log(`  warm-up ${side.name.padEnd(14)} ${warm.rows.toLocaleString("en-US")} rows, ${(warm.bytes / 2 ** 20).toFixed(1)} MiB in ${Math.round(warm.totalMs)} ms`);
    }
    for (let round = 0; round < rounds; round++) {
      for (const { side, child, port, figures } of round % 2 === 0 ? live : [...live].reverse()) {
        const run = await fullExport(port, child.pid!);
        const leave = await leaveEarly(port);
        figures.exports.push(run);
        figures.leaveToEndMs.push(leave);
        log(
          `  round ${round + 1}/${rounds} ${side.name.padEnd(14)} ${Math.round(run.rows / (run.totalMs / 1000)).toLocaleString("en-US").padStart(9)} rows/s  ` +
            `TTFB ${run.ttfbMs.toFixed(0)} ms  RSS +${run.rssGrowthMiB.toFixed(1)} MiB  left → query end ${leave.toFixed(1)} ms`,
        );
      }
    }
  } finally {
    await Promise.all(live.map(({ child }) => stopChild(child)));
  }
  const [qs, raw] = live.map(({ figures }) => figures) as [SideFigures, SideFigures];
  const rowsPerSec = (f: SideFigures): Array<number> => f.exports.map((e) => e.rows / (e.totalMs / 1000));
  const ratios = qs.exports.map((_, i) => rowsPerSec(qs)[i]! / rowsPerSec(raw)[i]!);
  const rows = qs.exports[0]?.rows ?? 0;
  if (raw.exports.some((e) => e.rows !== rows) || qs.exports.some((e) => e.rows !== rows)) {
    return { status: "failed", reason: "the servers exported different row counts" };
  }
  const side = (f: SideFigures): SideSummary => ({
    rowsPerSec: median(rowsPerSec(f)),
    rowsPerSecRange: range(rowsPerSec(f)),
    ttfbMs: median(f.exports.map((e) => e.ttfbMs)),
    ttfbMsRange: range(f.exports.map((e) => e.ttfbMs)),
    rssGrowthMiB: Math.max(...f.exports.map((e) => e.rssGrowthMiB)),
    rssGrowthMiBRange: range(f.exports.map((e) => e.rssGrowthMiB), 1),
    leaveToEndMs: median(f.leaveToEndMs),
    leaveToEndMsRange: range(f.leaveToEndMs, 1),
    mib: f.exports[0]!.bytes / 2 ** 20,
  });
  const summary: ExportSummary = { rows, rounds, throughputRatio: median(ratios), throughputRatioRange: range(ratios, 2), queryserve: side(qs), raw: side(raw) };
  return { status: "ok", data: { ...summary } };
};

/** The section's lines for the console and RESULTS.md. */
export const exportLines = (task: TaskResult): string[] => {
  if (task.status !== "ok" || task.data === undefined) return [`- ${task.status}: ${task.reason ?? ""}`];
  const d = task.data as unknown as ExportSummary;
  const line = (name: string, s: SideSummary): string =>
    `- ${name}: ${Math.round(s.rowsPerSec).toLocaleString("en-US")} rows/s (${s.rowsPerSecRange}), ` +
    `time to first byte ${Math.round(s.ttfbMs)} ms (${s.ttfbMsRange}), RSS growth at most ${s.rssGrowthMiB.toFixed(1)} MiB (${s.rssGrowthMiBRange}), ` +
    `client leaving → query end ${s.leaveToEndMs.toFixed(1)} ms (${s.leaveToEndMsRange}), ${s.mib.toFixed(1)} MiB of CSV`;
  return [
    `- ${d.rows.toLocaleString("en-US")} rows (one tenant's year), ${d.rounds} exports per server, alternating`,
    line("queryserve", d.queryserve),
    line("raw node:http", d.raw),
    `- throughput queryserve/raw: ${d.throughputRatio.toFixed(2)}× (${d.throughputRatioRange}); goals: RSS growth ≤ ${GOALS.rssGrowthMiB} MiB, ≥ ${GOALS.throughputRatio}×, leaving → end ≤ ${GOALS.leaveToEndMs} ms`,
  ];
};
