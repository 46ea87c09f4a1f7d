/**
 * Child processes of the bench: each server (and each one-shot task) runs as
 * `node --import tsx <file>` in its own process group, so the load generator
 * never shares its event loop and a kill reaches any workers it forked.
 * Every child is registered and killed on exit, error or signal.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { logMode } from "./env.js";

const BENCH_DIR = fileURLToPath(new URL("../", import.meta.url));
const ROOT_DIR = fileURLToPath(new URL("../../", import.meta.url));
/** Without tsconfig.json's `paths` alias, `queryserve` resolves to the built dist/ (see bench/tsconfig.json). */
const TSCONFIG = `${BENCH_DIR}tsconfig.json`;

const live = new Set<ChildProcess>();

const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal); // the child's own process group (detached)
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
};

/** Synchronous last resort, for process 'exit'. */
export const killAllNow = (): void => {
  for (const child of live) killGroup(child, "SIGKILL");
  live.clear();
};

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export const stopChild = (child: ChildProcess, graceMs = 4000): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(child);
      resolve();
      return;
    }
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      killGroup(child, "SIGKILL"); // any straggler in its group (forked workers)
      live.delete(child);
      resolve();
    });
    killGroup(child, "SIGTERM");
    child.stdin?.end();
  });

export const stopAll = async (): Promise<void> => {
  await Promise.all([...live].map((child) => stopChild(child)));
};

/** A free loopback port (bound then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export type ProtocolOutcome =
  | { readonly kind: "ready"; readonly port: number }
  | { readonly kind: "result"; readonly json: string }
  | { readonly kind: "skip"; readonly reason: string }
  | { readonly kind: "fail"; readonly reason: string };

export interface Started {
  readonly child: ChildProcess;
  readonly outcome: ProtocolOutcome;
  /** ms from spawn to the protocol line */
  readonly elapsedMs: number;
}

/**
 * How a child runs: `tsx` on the TypeScript file; `node` on it compiled to plain JavaScript in
 * bench/.build/ (the bench's own files bundled in, packages left to Node: `queryserve` is the built
 * dist/), so that a measurement of start-up sees what users run, without tsx's module hooks, which
 * cost time for every module Node loads; `bundled`: the same with every package bundled in too, as
 * serverless functions are usually deployed.
 */
export type RunMode = "tsx" | "node" | "bundled";

const compiled = (relative: string, mode: RunMode): string => {
  const outfile = `${BENCH_DIR}.build/${basename(relative, ".ts")}${mode === "bundled" ? ".bundled" : ""}.mjs`;
  buildSync({
    entryPoints: [`${BENCH_DIR}${relative}`],
    outfile,
    bundle: true,
    ...(mode === "bundled" ? {} : { packages: "external" as const }),
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: TSCONFIG,
    logLevel: "warning",
  });
  return outfile;
};

/**
 * Spawns `node --import tsx bench/<relative>` (or `node` on the compiled file, see RunMode) with PORT
 * and extra env; resolves at the first protocol line (ready/result/skip/fail), on exit, or on timeout.
 * Non-protocol stdout lines and stderr are kept (last 20) for error reports. The stdout of the log
 * setup (QS_LOG_MODE=stdout) and of the raw-log reference carries their log lines: it goes to
 * /dev/null, and their protocol lines to stderr.
 */
export const spawnBench = (
  relative: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
  mode: RunMode = "tsx",
): Promise<Started> =>
  new Promise((resolve) => {
    const args = mode === "tsx" ? ["--import", "tsx", `${BENCH_DIR}${relative}`] : [compiled(relative, mode)];
    const file = basename(relative);
    const logsToStdout = file === "raw-log.ts" || (file === "queryserve-full-log.ts" && logMode() === "stdout");
    const t0 = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: ROOT_DIR,
      env: {
        ...process.env,
        ...env,
        BENCH_PARENT: "1",
        NODE_ENV: "production",
        TSX_TSCONFIG_PATH: TSCONFIG,
        ...(logsToStdout ? { BENCH_PROTOCOL: "stderr" } : {}),
      },
      stdio: ["pipe", logsToStdout ? "ignore" : "pipe", "pipe"],
      detached: true,
    });
    live.add(child);
    const tail: string[] = [];
    const keep = (line: string): void => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
    };
    let settled = false;
    const settle = (outcome: ProtocolOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ child, outcome, elapsedMs: performance.now() - t0 });
    };
    const timer = setTimeout(() => {
      settle({ kind: "fail", reason: `no ready line after ${timeoutMs} ms; output: ${tail.join(" | ")}` });
    }, timeoutMs);
    const onProtocolLine = (line: string): void => {
      const space = line.indexOf(" ");
      const word = space === -1 ? line : line.slice(0, space);
      const rest = space === -1 ? "" : line.slice(space + 1);
      if (word === "ready") settle({ kind: "ready", port: Number(rest) });
      else if (word === "result") settle({ kind: "result", json: rest });
      else if (word === "skip") settle({ kind: "skip", reason: rest });
      else if (word === "fail") settle({ kind: "fail", reason: rest });
      else keep(line);
    };
    if (child.stdout !== null) createInterface({ input: child.stdout }).on("line", onProtocolLine);
    if (child.stderr !== null) createInterface({ input: child.stderr }).on("line", logsToStdout ? onProtocolLine : keep);
    child.once("error", (error) => settle({ kind: "fail", reason: `spawn failed: ${error.message}` }));
    child.once("exit", (code, signal) => {
      live.delete(child);
      settle({ kind: "fail", reason: `exited (${signal ?? String(code)}) before a protocol line; output: ${tail.join(" | ")}` });
    });
  });

// ---------------------------------------------------------------- /proc sampling

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
} catch {
  /* keep 100 */
}

const readStat = (pid: number): { ppid: number; cpuTicks: number } | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after "(comm)": state ppid ... utime(14) stime(15) in 1-based numbering
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
};

/** pid plus every descendant (cluster workers, forks). */
export const processTree = (root: number): number[] => {
  const parents = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [root];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined) continue;
    const list = parents.get(stat.ppid) ?? [];
    list.push(Number(entry));
    parents.set(stat.ppid, list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift();
    if (pid === undefined) break;
    out.push(pid);
    queue.push(...(parents.get(pid) ?? []));
  }
  return out;
};

/** CPU seconds used so far by the process tree under `root`. */
export const treeCpuSeconds = (root: number): number =>
  processTree(root).reduce((sum, pid) => sum + (readStat(pid)?.cpuTicks ?? 0), 0) / clockTicks;

/** Resident set size in MiB of the tree under `root` (VmRSS summed). */
export const treeRssMiB = (root: number): number =>
  processTree(root).reduce((sum, pid) => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return sum + (match?.[1] !== undefined ? Number(match[1]) : 0);
    } catch {
      return sum;
    }
  }, 0) / 1024;

/** Busy CPU seconds of the whole machine so far (all cores, /proc/stat), or NaN off Linux. */
export const machineBusySeconds = (): number => {
  try {
    const first = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu user nice system idle iowait irq softirq steal ...
    const f = first.trim().split(/\s+/).slice(1).map(Number);
    const at = (i: number): number => f[i] ?? 0;
    return (at(0) + at(1) + at(2) + at(5) + at(6) + at(7)) / clockTicks;
  } catch {
    return Number.NaN;
  }
};
