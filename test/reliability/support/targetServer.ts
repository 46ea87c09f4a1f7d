/**
 * The server under test, in its own process (`fork` with `--import tsx`), so that a crash is seen
 * as a crash. It serves three APIs from one process:
 * - demo: the analytics demo (DuckDB, API keys, auto-injected tenant filter, Effect Schema inputs)
 *   plus a JWT strategy, a global rate limit, a key-guessing limit and POST routes with JSON bodies;
 * - faults: handlers that hang, throw after answering, leak a rejected promise, or fail with
 *   secrets in their error, and two Redis-backed rate limits (fail open, fail closed);
 * - shapes: the demo's endpoints over every shape of table source (shapeVariants.ts).
 * The demo's database is DuckDB, or chDB (ClickHouse in the process) with `engine: "clickhouse"`.
 * Configuration comes as JSON in argv[2] (TargetConfig). Prints `ready {"demo":port,"faults":port,"shapes":port}`;
 * answers the IPC message "memory" with its memory use after a full GC.
 */
import { appendFileSync } from "node:fs"
import type { IncomingMessage } from "node:http"
import { ManagedRuntime } from "effect"
import {
  defineServe,
  jwtAuth,
  rateLimit,
  RateLimitStore,
  redisRateLimitStoreLayer,
  type RateLimitStoreService,
  type ServeContext,
  startNodeServer
} from "queryserve"
import { createAnalyticsApi } from "../../../examples/analytics/api.js"
import { createDemoDatabase } from "../../../examples/analytics/dataset.js"
import { ConnectionPool, duckDbDriver } from "../../../examples/analytics/duckdb.js"
import { createDb, type Db } from "../../../examples/analytics/sql.js"
import { clickHouseDriver } from "../../../examples/clickhouse/clickhouse.js"
import { openDemoOnChdb } from "../../../examples/clickhouse/embeddedDemo.js"
import { shapeVariantsHandler } from "./shapeVariants.js"
import { API_KEYS, AUTH_FAILURE_LIMIT, JWT_SECRET, type TargetConfig } from "./targetConfig.js"

const config = JSON.parse(process.argv[2] ?? "{}") as TargetConfig

const demoDatabase = config.engine === "clickhouse" ? undefined : await createDemoDatabase({ rows: config.rows, log: () => {} })
const db: Db = demoDatabase === undefined
  ? createDb(clickHouseDriver((await openDemoOnChdb(config.rows, () => {})).executor))
  : createDb(duckDbDriver(await ConnectionPool.open(demoDatabase.instance, 4)))

const demo = createAnalyticsApi(db, {
  keys: API_KEYS,
  queryLogging: false,
  authFailureLimit: AUTH_FAILURE_LIMIT,
  ...(config.resultCache === true && { resultCache: true })
})
demo.useAuth(jwtAuth({ secret: JWT_SECRET }))
demo.use(
  rateLimit({
    windowMs: 1_000,
    max: config.rateLimitPerSecond,
    // Per tenant, what a multi-tenant API sells as its quota; callers without a tenant share one.
    keyBy: (ctx: ServeContext) => ctx.tenantId ?? "no-tenant"
  })
)
for (const endpoint of ["revenueByRegion", "topProducts", "ordersExport", "tenantSummary"] as const) {
  demo.route(`/${endpoint}`, endpoint, { method: "POST" })
}

/** Counts what the fault handlers observed, for the test to read back. */
const observed = { aborted: 0 }

const redisRuntime = config.redisUrl === undefined
  ? undefined
  : ManagedRuntime.make(redisRateLimitStoreLayer({ url: config.redisUrl, commandTimeoutMs: 500 }))
const store: RateLimitStoreService | undefined = await redisRuntime?.runPromise(RateLimitStore)
const limited = (failOpen: boolean) => rateLimit({ windowMs: 60_000, max: 1_000_000_000, keyBy: () => "load", failOpen, ...(store && { store }) })

const faults = defineServe({
  queries: {
    ping: () => ({ ok: true }),
    observed: () => observed,
    slow: ({ input }: { input: { ms?: string } }) =>
      new Promise((resolve) => setTimeout(() => resolve({ slept: true }), Number(input.ms ?? 100))),
    hang: ({ ctx }: { ctx: ServeContext }) => {
      ctx.signal.addEventListener("abort", () => observed.aborted++)
      return new Promise(() => {})
    },
    throwAfterAnswer: () => {
      setTimeout(() => {
        throw new Error("late failure: a timer of the handler threw after the answer was sent")
      }, 5)
      return { answered: true }
    },
    leakRejection: () => {
      void Promise.reject(new Error("leaked rejection: a promise the handler dropped"))
      return { answered: true }
    },
    secretFailure: async () => {
      throw new Error("SELECT * FROM orders WHERE tenant_id = 'acme' -- password=hunter2")
    },
    limitedFailOpen: { query: () => ({ ok: true }), middlewares: [limited(true)] },
    limitedFailClosed: { query: () => ({ ok: true }), middlewares: [limited(false)] }
  }
})

const serverOptions = {
  port: 0,
  hostname: "127.0.0.1",
  bodyLimit: config.bodyLimit,
  gracefulShutdownTimeout: 8_000,
  ...(config.handleUncaughtErrors === undefined ? {} : { handleUncaughtErrors: config.handleUncaughtErrors })
}
const [demoServer, faultServer, shapesServer] = await Promise.all([
  demo.start(serverOptions),
  faults.start({ ...serverOptions, requestTimeout: config.faultRequestTimeout }),
  startNodeServer(shapeVariantsHandler(db, API_KEYS, JWT_SECRET), serverOptions)
])

const { admittedLog } = config
if (admittedLog !== undefined) {
  // Synchronous, so that what was admitted is on disk even when SIGTERM ends the process.
  for (const { server } of [demoServer, faultServer]) {
    server?.on("request", (request: IncomingMessage) => appendFileSync(admittedLog, `${request.headers["x-request-id"]}\n`))
  }
}

process.on("message", (message) => {
  if (message !== "memory") return
  globalThis.gc?.()
  const { rss, heapUsed } = process.memoryUsage()
  process.send?.({ rss, heapUsed })
})
process.stdout.write(`ready ${JSON.stringify({ demo: demoServer.port, faults: faultServer.port, shapes: shapesServer.port })}\n`)
