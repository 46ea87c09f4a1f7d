/**
 * Loads queryserve from this checkout (src/index.ts) at run time and builds the
 * bench setups with the API of SPEC.md:
 *   defineServe({ queries, auth, middlewares, queryLogging }) → builder
 *   builder.start({ port, hostname, workers? }) → Promise<{ stop() }>
 *   apiKeyAuth({ header, validate }), formatQueryEventJSON(event), buildOpenApiDocument(endpoints)
 *
 * The import is dynamic and every export is checked before use, so the bench
 * type-checks and runs while src/ is still being written; a missing piece
 * becomes a SkipServer with the reason instead of a crash.
 */
import { Schema } from "effect";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  API_KEY,
  LIMIT_MAX,
  LIMIT_MIN,
  REGIONS,
  REQUIRED_ROLE,
  isLimit,
  isRegion,
  reportFor,
  revenueFor,
  type ReportResult,
  type RevenueResult,
} from "./fixture.js";
import { SkipServer, type RunningServer } from "./serverMain.js";
import { NO_ROLE_API_KEY } from "./verify.js";

type Fn = (...args: unknown[]) => unknown;

export const SRC_DIR = fileURLToPath(new URL("../../src/", import.meta.url));
const ENTRY = join(SRC_DIR, "index.ts");

const fnOf = (target: unknown, name: string): Fn | undefined => {
  if (typeof target !== "object" && typeof target !== "function") return undefined;
  if (target === null) return undefined;
  const value: unknown = Reflect.get(target, name);
  return typeof value === "function" ? (value as Fn) : undefined;
};

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof Reflect.get(value, "then") === "function";

export interface QueryserveModule {
  readonly module: object;
  readonly defineServe: Fn;
  readonly apiKeyAuth: Fn | undefined;
  readonly formatQueryEventJSON: Fn | undefined;
  readonly buildOpenApiDocument: Fn | undefined;
}

/** Imports src/index.ts; throws SkipServer when it is absent or lacks defineServe. */
export const loadQueryserve = async (): Promise<QueryserveModule> => {
  if (!existsSync(ENTRY)) throw new SkipServer("src/index.ts does not exist yet");
  let module: unknown;
  try {
    module = await import(new URL("../../src/index.ts", import.meta.url).href);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SkipServer(`importing src/index.ts failed: ${message.split("\n")[0] ?? message}`);
  }
  if (typeof module !== "object" || module === null) throw new SkipServer("src/index.ts has no exports");
  const defineServe = fnOf(module, "defineServe");
  if (defineServe === undefined) throw new SkipServer("src/index.ts does not export defineServe yet");
  return {
    module,
    defineServe,
    apiKeyAuth: fnOf(module, "apiKeyAuth"),
    formatQueryEventJSON: fnOf(module, "formatQueryEventJSON"),
    buildOpenApiDocument: fnOf(module, "buildOpenApiDocument"),
  };
};

/** Does any file under src/ mention a `workers` option? (No runtime way to ask.) */
export const srcMentionsWorkers = (): boolean => {
  const walk = (dir: string): boolean =>
    readdirSync(dir).some((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return walk(path);
      return path.endsWith(".ts") && /\bworkers\b/.test(readFileSync(path, "utf8"));
    });
  return existsSync(SRC_DIR) && walk(SRC_DIR);
};

export type Setup = "bare" | "full" | "full-log";

export const isSetup = (value: unknown): value is Setup =>
  value === "bare" || value === "full" || value === "full-log";

/** Input schemas: Effect Schema by default; QS_SCHEMA=standard wraps them as Standard Schema v1. */
const RevenueInput = Schema.Struct({ region: Schema.Literal(...REGIONS) });
const ReportInput = Schema.Struct({
  region: Schema.Literal(...REGIONS),
  limit: Schema.Int.pipe(Schema.between(LIMIT_MIN, LIMIT_MAX)),
});

const inputSchemas = (): { revenue: unknown; report: unknown } =>
  process.env["QS_SCHEMA"] === "standard"
    ? { revenue: Schema.standardSchemaV1(RevenueInput), report: Schema.standardSchemaV1(ReportInput) }
    : { revenue: RevenueInput, report: ReportInput };

const inputOf = (args: unknown): unknown =>
  typeof args === "object" && args !== null ? Reflect.get(args, "input") : undefined;

/** Handlers re-check their (already validated) input only to stay cast-free. */
export const revenueQuery = (args: unknown): RevenueResult => {
  const input = inputOf(args);
  const region: unknown = typeof input === "object" && input !== null ? Reflect.get(input, "region") : undefined;
  if (!isRegion(region)) throw new Error("handler received unvalidated input");
  return revenueFor(region);
};

const reportQuery = (args: unknown): ReportResult => {
  const input = inputOf(args);
  const get = (key: string): unknown =>
    typeof input === "object" && input !== null ? Reflect.get(input, key) : undefined;
  const region = get("region");
  const limit = get("limit");
  if (!isRegion(region) || !isLimit(limit)) throw new Error("handler received unvalidated input");
  return reportFor(region, limit);
};

interface AuthValue {
  readonly userId: string;
  readonly roles: string[];
  readonly scopes: string[];
}

const validateKey = (key: unknown): AuthValue | null => {
  if (key === API_KEY) return { userId: "bench", roles: [REQUIRED_ROLE], scopes: ["analytics:read"] };
  if (key === NO_ROLE_API_KEY) return { userId: "viewer", roles: ["viewer"], scopes: [] };
  return null;
};

/** Dropped log lines still have to be produced: the sink counts their bytes. */
let loggedBytes = 0;
export const loggedBytesSoFar = (): number => loggedBytes;

const fallbackJson = (event: unknown): string | null => {
  if (typeof event !== "object" || event === null) return null;
  const get = (key: string): unknown => Reflect.get(event, key);
  const status = get("status");
  if (status === "started") return null;
  return JSON.stringify({
    level: status === "error" ? "error" : "info",
    msg: `${String(get("method"))} ${String(get("path"))}`,
    requestId: get("requestId"),
    endpoint: get("endpointKey"),
    status: get("responseStatus"),
    durationMs: get("durationMs"),
    timestamp: new Date().toISOString(),
  });
};

/** One pass-through global middleware: `(ctx, next) => next()`, counting calls. */
let middlewareCalls = 0;
const countingMiddleware = (_ctx: unknown, next: unknown): unknown => {
  middlewareCalls++;
  if (typeof next !== "function") throw new Error("middleware got no next()");
  const result: unknown = next();
  return result;
};
export const middlewareCallsSoFar = (): number => middlewareCalls;

/** The config passed to defineServe for one setup. */
export const buildConfig = (qs: QueryserveModule, setup: Setup): Record<string, unknown> => {
  const schemas = inputSchemas();
  const full = setup !== "bare";
  const guard = full ? { requiredRoles: [REQUIRED_ROLE] } : {};
  const queries = {
    revenue: { inputSchema: schemas.revenue, query: revenueQuery, ...guard },
    "revenue-report": { method: "POST", inputSchema: schemas.report, query: reportQuery, ...guard },
  };
  const config: Record<string, unknown> = { queries };
  if (full) {
    if (qs.apiKeyAuth === undefined) throw new SkipServer("src/index.ts does not export apiKeyAuth yet");
    config["auth"] = [qs.apiKeyAuth({ header: "x-api-key", validate: validateKey })];
    config["middlewares"] = [countingMiddleware];
  }
  if (setup === "full-log") {
    if (process.env["QS_LOG_MODE"] === "json") {
      // 'json' mode writes with console.log: send those lines to the sink instead of stdout.
      console.log = (...args: unknown[]): void => {
        loggedBytes += args.map(String).join(" ").length;
      };
      config["queryLogging"] = "json";
    } else {
      const format = qs.formatQueryEventJSON;
      config["queryLogging"] = (event: unknown): void => {
        const line: unknown = format !== undefined ? format(event) : fallbackJson(event);
        if (typeof line === "string") loggedBytes += line.length;
      };
    }
  }
  return config;
};

export interface StartOptions {
  readonly port: number;
  readonly hostname: string;
  readonly workers?: number;
}

/** builder.start(options) → { stop() }, checked at every step. */
export const startBuilder = async (builder: unknown, options: StartOptions): Promise<RunningServer> => {
  const start = fnOf(builder, "start");
  if (start === undefined) throw new SkipServer("defineServe(...) has no start() yet");
  const startOptions: Record<string, unknown> = { port: options.port, hostname: options.hostname, quiet: true };
  if (options.workers !== undefined) startOptions["workers"] = options.workers;
  const pending: unknown = start.call(builder, startOptions);
  const started: unknown = isThenable(pending) ? await pending : pending;
  const stop = fnOf(started, "stop");
  if (stop === undefined) throw new SkipServer("builder.start() did not resolve to an object with stop()");
  return {
    stop: async () => {
      await stop.call(started);
    },
  };
};

/**
 * After the verification requests: the setup really ran its middleware / produced log
 * lines (in this process; with workers they run elsewhere, so nothing is checked).
 */
export const checkSetupRan = (setup: Setup, workers: number | undefined): string | undefined => {
  if (workers !== undefined && workers > 1) return undefined;
  if (setup !== "bare" && middlewareCalls === 0) return "the global middleware was never called";
  if (setup === "full-log" && loggedBytes === 0) return "queryLogging produced no log line";
  return undefined;
};

/** The whole server of one setup. */
export const startQueryserve = async (setup: Setup, port: number, hostname: string, workers?: number): Promise<RunningServer> => {
  if (workers !== undefined && workers > 1 && !srcMentionsWorkers()) {
    throw new SkipServer(`builder.start({ workers: ${workers} }) is not implemented in src/ yet`);
  }
  const qs = await loadQueryserve();
  const builder: unknown = qs.defineServe(buildConfig(qs, setup));
  return startBuilder(builder, workers === undefined ? { port, hostname } : { port, hostname, workers });
};
