/**
 * autocannon driver. Runs in the orchestrator's process (the servers are
 * children), measures the load generator's own CPU and the server tree's CPU
 * over the run, so a run limited by the load generator can be told apart.
 */
import autocannon from "autocannon";
import { machineBusySeconds, treeCpuSeconds } from "./children.js";

export interface Target {
  readonly port: number;
  readonly pid: number;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface RunOptions {
  readonly connections: number;
  /** seconds; ignored when `amount` is set */
  readonly durationSec: number;
  /** total requests instead of a duration */
  readonly amount?: number;
  /** hard stop for `amount` runs, seconds */
  readonly maxSec?: number;
}

export interface RunResult {
  readonly rps: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly latencyMean: number;
  readonly requests: number;
  readonly ok2xx: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly durationSec: number;
  /** share of one core the load generator used (1 = a full core) */
  readonly loadgenCores: number;
  /** cores used by the server process tree */
  readonly serverCores: number;
  /** server CPU time per completed request, µs: robust to other load on the box */
  readonly serverUsPerReq: number;
  /** cores busy on the whole machine (server, load generator, kernel networking, anything else) */
  readonly machineCores: number;
}

export const runLoad = (target: Target, options: RunOptions): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const server0 = treeCpuSeconds(target.pid);
    const machine0 = machineBusySeconds();
    const wall0 = performance.now();
    const opts: autocannon.Options = {
      url: `http://127.0.0.1:${target.port}${target.path}`,
      method: target.method,
      headers: { ...target.headers },
      connections: options.connections,
      pipelining: 1,
      timeout: 10,
    };
    if (target.body !== undefined) opts.body = target.body;
    if (options.amount !== undefined) opts.amount = options.amount;
    else opts.duration = options.durationSec;
    let hardStop: NodeJS.Timeout | undefined;
    const instance = autocannon(opts, (error: unknown, result: autocannon.Result) => {
      if (hardStop !== undefined) clearTimeout(hardStop);
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const wall = (performance.now() - wall0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const serverCpu = treeCpuSeconds(target.pid) - server0;
      const machineCpu = machineBusySeconds() - machine0;
      const completed = result["1xx"] + result["2xx"] + result["3xx"] + result["4xx"] + result["5xx"];
      resolve({
        rps: result.duration > 0 ? completed / result.duration : 0,
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        latencyMean: result.latency.mean,
        requests: completed,
        ok2xx: result["2xx"],
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        durationSec: result.duration,
        loadgenCores: (cpu.user + cpu.system) / 1e6 / wall,
        serverCores: serverCpu / wall,
        serverUsPerReq: completed > 0 ? (serverCpu * 1e6) / completed : Number.NaN,
        machineCores: machineCpu / wall,
      });
    });
    if (options.amount !== undefined && options.maxSec !== undefined) {
      hardStop = setTimeout(() => instance.stop(), options.maxSec * 1000);
    }
  });
