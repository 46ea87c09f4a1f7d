/**
 * The queryserve bench setups, built from the compiled package: `import ... from "queryserve"`
 * resolves through package.json `exports` to dist/index.js (children.ts runs the servers with
 * bench/tsconfig.json, which has no `paths` alias to src/), so the figures are those of the
 * JavaScript users run, without tsx's transform wrappers. `npm run bench` builds dist/ first.
 */
import * as Schema from "effect/Schema";
import {
  apiKeyAuth,
  defineServe,
  formatQueryEventJSON,
  type ServeAuthContext,
  type ServeConfig,
  type ServeMiddleware,
  type ServeQueryEvent,
} from "queryserve";
import {
  API_KEY,
  LIMIT_MAX,
  LIMIT_MIN,
  REGIONS,
  REQUIRED_ROLE,
  reportFor,
  revenueFor,
  type Region,
  type ReportResult,
  type RevenueResult,
} from "./fixture.js";
import { logMode } from "./env.js";
import { runServer, type RunningServer } from "./serverMain.js";
import { NO_ROLE_API_KEY, type VerifyOptions } from "./verify.js";

export type Setup = "bare" | "full" | "full-log" | "full-metrics" | "full-mcp";

/** Input schemas: Effect Schema by default; QS_SCHEMA=standard wraps them as Standard Schema v1. */
const RevenueInput = Schema.Struct({ region: Schema.Literal(...REGIONS) });
const ReportInput = Schema.Struct({
  region: Schema.Literal(...REGIONS),
  limit: Schema.Int.pipe(Schema.between(LIMIT_MIN, LIMIT_MAX)),
});

const standard = process.env["QS_SCHEMA"] === "standard";
const revenueSchema = standard ? Schema.standardSchemaV1(RevenueInput) : RevenueInput;
const reportSchema = standard ? Schema.standardSchemaV1(ReportInput) : ReportInput;

export const revenueQuery = ({ input }: { readonly input: { readonly region: Region } }): RevenueResult =>
  revenueFor(input.region);

const reportQuery = ({ input }: { readonly input: { readonly region: Region; readonly limit: number } }): ReportResult =>
  reportFor(input.region, input.limit);

const validateKey = (key: string): ServeAuthContext | null => {
  if (key === API_KEY) return { userId: "bench", roles: [REQUIRED_ROLE], scopes: ["analytics:read"] };
  if (key === NO_ROLE_API_KEY) return { userId: "viewer", roles: ["viewer"], scopes: [] };
  return null;
};

/** Log lines are counted as they are written (or dropped), so that a setup that logged nothing is caught. */
let loggedBytes = 0;

/** One pass-through global middleware: `(ctx, next) => next()`, counting calls. */
let middlewareCalls = 0;
const countingMiddleware: ServeMiddleware = (_ctx, next) => {
  middlewareCalls++;
  return next();
};

/** The log setup's `queryLogging`, by QS_LOG_MODE (see logMode). */
const queryLoggingOf = (setup: Setup): ServeConfig["queryLogging"] => {
  if (setup !== "full-log") return undefined;
  const mode = logMode();
  if (mode === "callback") {
    return (event: ServeQueryEvent): void => {
      const line = formatQueryEventJSON(event);
      if (line !== null) loggedBytes += line.length;
    };
  }
  if (mode === "sink") {
    console.log = (...args: unknown[]): void => {
      loggedBytes += args.map(String).join(" ").length;
    };
  } else {
    // The lines go out through console.log and process.stdout as in production; only counted on the way.
    const write = process.stdout.write.bind(process.stdout) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      loggedBytes += chunk.length;
      return write(chunk, ...rest);
    }) as typeof process.stdout.write;
  }
  return "json";
};

/**
 * The definition of one setup: bare = routing + validation + handler; full adds auth, a role guard
 * and a middleware; full-metrics is full with `metrics: true` (prom-client series of every request);
 * full-mcp is full with `mcp: true` (the endpoints also served as MCP tools).
 */
export const defineSetup = (setup: Setup) => {
  const full = setup !== "bare";
  const requiredRoles = full ? [REQUIRED_ROLE] : undefined;
  return defineServe({
    queries: {
      revenue: { inputSchema: revenueSchema, query: revenueQuery, requiredRoles },
      "revenue-report": { method: "POST", inputSchema: reportSchema, query: reportQuery, requiredRoles },
    },
    auth: full ? apiKeyAuth({ header: "x-api-key", validate: validateKey }) : undefined,
    middlewares: full ? [countingMiddleware] : [],
    queryLogging: queryLoggingOf(setup),
    metrics: setup === "full-metrics",
    mcp: setup === "full-mcp",
  });
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
export const startQueryserve = (setup: Setup, port: number, hostname: string, workers?: number): Promise<RunningServer> =>
  defineSetup(setup).start({ port, hostname, ...(workers === undefined ? {} : { workers }) });

/** Entry of a bench/servers/queryserve-*.ts file: serves one setup; WORKERS=n passes { workers: n } to start(). */
export const runQueryserveServer = (setup: Setup, verify: VerifyOptions): void => {
  const workersEnv = process.env["WORKERS"];
  const workers = workersEnv === undefined || workersEnv === "" ? undefined : Number(workersEnv);
  void runServer({
    name: `queryserve-${setup}`,
    verify,
    start: (port, host) => startQueryserve(setup, port, host, workers),
    afterVerify: () => checkSetupRan(setup, workers),
  });
};
