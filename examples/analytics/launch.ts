/**
 * Starts the analytics API over a database, with the dashboard at `/`, and runs it until
 * SIGINT/SIGTERM: the shared body of `npm start` (DuckDB) and the Postgres and ClickHouse examples.
 * Prints the URLs, the demo keys, commands to paste, and the time from process start to the first
 * answered request.
 */
import { createServer } from "node:net"
import { redisResultCacheStore, type SqlExecutor, startNodeServer } from "queryserve"
import { API_KEY_HEADER, type AnalyticsEndpoint, createAnalyticsApi, DEMO_API_KEYS, DEMO_AUTH_FAILURE_LIMIT } from "./api.js"
import { buildDashboard } from "./dashboard/assets.js"
import { withDashboard } from "./dashboard/routes.js"
import type { Db } from "./sql.js"

export interface DemoBackend {
  /** Which database serves, for the banner. */
  readonly label: string
  readonly db: Db
  /** The same database as the `orders` dataset's executor. */
  readonly sql: SqlExecutor
  /** Serve only these endpoints (a dialect may lack functions some metrics use). Default: all. */
  readonly endpoints?: ReadonlyArray<AnalyticsEndpoint>
  /** Releases the database once the server has stopped. */
  close(): Promise<void>
}

const [ACME_KEY, GLOBEX_KEY, ADMIN_KEY] = Object.keys(DEMO_API_KEYS)
const RANGE = "from=2025-01-01&to=2025-03-31"

/** Commands for the banner: key, endpoint, route (with suffix) and query string. */
const EXAMPLES: ReadonlyArray<readonly [key: string, endpoint: AnalyticsEndpoint, route: string, query: string]> = [
  [ACME_KEY!, "revenueByRegion", "revenueByRegion", RANGE],
  [GLOBEX_KEY!, "topProducts", "topProducts", `${RANGE}&limit=3`],
  [ACME_KEY!, "ordersExport", "ordersExport.csv", `${RANGE}&maxRows=5`],
  [ADMIN_KEY!, "tenantsOverview", "tenantsOverview", ""]
]

const LOOPBACK = /^(localhost|127(\.\d+){3}|::1|\[::1\])$/

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

const DATASET_QUESTION = JSON.stringify({ dimensions: ["day.month", "region"], measures: ["revenue"], filters: [{ field: "day", op: "between", value: ["2025-01-01", "2025-03-31"] }] })

const banner = (label: string, origin: string, baseUrl: string, served: ReadonlySet<string>): string => {
  const keys = Object.entries(DEMO_API_KEYS).map(([key, caller]) => {
    const scope = "tenantId" in caller ? `tenant ${caller.tenantId}` : "no tenant"
    return `  ${key.padEnd(18)} ${caller.name} (${scope}, role ${caller.roles.join(", ")})`
  })
  const commands = EXAMPLES.filter(([, endpoint]) => served.has(endpoint)).map(([key, , route, query]) => {
    const url = `${baseUrl}/${route}${query === "" ? "" : `?${query}`}`
    return `  curl -s -H ${shellQuote(`${API_KEY_HEADER}: ${key}`)} ${shellQuote(url)}`
  })
  return [
    "",
    `queryserve analytics demo: ${baseUrl} (${label})`,
    `  Dashboard      ${origin}/`,
    `  API reference  ${baseUrl}/docs`,
    `  OpenAPI        ${baseUrl}/openapi.json`,
    `  Metrics        ${baseUrl}/metrics (Prometheus, admin key)`,
    `  MCP (agents)   ${baseUrl}/mcp`,
    "",
    `API keys (header ${API_KEY_HEADER}):`,
    ...keys,
    `  after ${DEMO_AUTH_FAILURE_LIMIT.max} wrong keys from one address within ${DEMO_AUTH_FAILURE_LIMIT.windowMs / 60_000} min, ` +
      "that address gets 429 until the window ends",
    "",
    "Try:",
    ...commands,
    `  curl -s -H ${shellQuote(`${API_KEY_HEADER}: ${ACME_KEY}`)} -H 'content-type: application/json' -d ${shellQuote(DATASET_QUESTION)} ${shellQuote(`${baseUrl}/datasets/orders`)}`,
    `  curl -s -H ${shellQuote(`${API_KEY_HEADER}: ${ADMIN_KEY}`)} ${shellQuote(`${baseUrl}/metrics`)}`,
    ""
  ].join("\n")
}

/** Results are cached in this process, or in Redis (shared by every demo process) when REDIS_URL is set. */
const resultCache = (redisUrl: string | undefined) =>
  redisUrl === undefined || redisUrl === "" ? true : { store: redisResultCacheStore({ url: redisUrl }) }

/**
 * Exits, saying to set PORT, when the demo's port is taken: checked before the dataset is built, so
 * that the answer comes at once and not after the seconds the data takes.
 */
export const exitIfPortInUse = async (): Promise<void> => {
  const port = process.env.PORT === undefined || process.env.PORT === "" ? 4000 : Number(process.env.PORT)
  const hostname = process.env.HOST || "localhost"
  const probe = createServer()
  const free = await new Promise<boolean>((resolve, reject) => {
    probe.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(false) : reject(error)))
    probe.listen(port, hostname, () => probe.close(() => resolve(true)))
  })
  if (!free) {
    console.error(`[demo] port ${port} is already in use on ${hostname}: set PORT to another one, e.g. PORT=${port + 1} npm start`)
    process.exit(1)
  }
}

/** Serves `backend` and the dashboard on PORT/HOST (default localhost:4000) until SIGINT or SIGTERM. */
export const launchDemo = async (backend: DemoBackend): Promise<void> => {
  const dashboard = buildDashboard()
  const api = createAnalyticsApi(backend.db, {
    resultCache: resultCache(process.env.REDIS_URL),
    sql: backend.sql,
    ...(backend.endpoints === undefined ? {} : { endpoints: backend.endpoints })
  })
  // The dashboard's page and files, then the API: one handler on queryserve's Node server, which
  // prints no start line of its own (the banner below says more). We own SIGINT/SIGTERM: after the
  // server has drained, the database must be closed too.
  const server = await startNodeServer(withDashboard(api.handler, await dashboard), { handleSignals: false })
  const baseUrl = `${server.url}${api.basePath}`

  let stopping = false
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      console.log(`[demo] ${signal} again: exiting now`)
      process.exit(1)
    }
    stopping = true
    console.log(`[demo] ${signal}: stopping`)
    await server.stop()
    await api.dispose()
    await backend.close()
    console.log("[demo] stopped")
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, (received) => void stop(received))

  // Start-up ends when a real request has been answered: data loaded, server up, first query run.
  // revenueByRegion is served over every database the examples support.
  const first = await fetch(`${baseUrl}/revenueByRegion?${RANGE}`, { headers: { [API_KEY_HEADER]: ACME_KEY! } }).catch(
    (error: unknown) => {
      if (stopping) return undefined // a signal came first: the server is draining
      throw error
    }
  )
  if (first === undefined) return
  if (!first.ok) throw new Error(`the first request failed: ${first.status} ${await first.text()}`)
  await first.arrayBuffer()

  console.log(banner(backend.label, server.url, baseUrl, new Set(api.describe().map((endpoint) => endpoint.key))))
  if (!LOOPBACK.test(server.hostname)) {
    console.log(`[demo] warning: listening on ${server.hostname} with the public demo keys; anyone who can reach it can read the data`)
  }
  console.log(`[demo] ready in ${Math.round(performance.now())} ms (process start to first answered request)`)
}
