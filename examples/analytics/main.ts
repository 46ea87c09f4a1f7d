/**
 * `npm start`: builds the demo dataset in an in-process DuckDB database, serves the analytics API
 * on PORT/HOST (default localhost:4000), prints keys and ready-to-paste commands, and stops cleanly
 * on Ctrl-C or SIGTERM. Environment: PORT, HOST, DEMO_ROWS (order rows, default 1,200,000).
 */
import { DEFAULT_ORDER_ROWS, createDemoDatabase } from "./dataset.js"
import { ConnectionPool, duckDbDriver } from "./duckdb.js"
import { API_KEY_HEADER, DEMO_API_KEYS, createAnalyticsApi } from "./api.js"
import { createDb } from "./sql.js"

/** Connections for concurrent requests; see docs-notes/demo.md for the measurement behind it. */
const POOL_SIZE = 4

const orderRows = (): number => {
  const text = process.env.DEMO_ROWS
  if (text === undefined || text === "") return DEFAULT_ORDER_ROWS
  const rows = Number(text)
  if (!Number.isSafeInteger(rows) || rows < 1) throw new RangeError(`DEMO_ROWS must be a positive integer, got ${text}`)
  return rows
}

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

const curl = (key: string, url: string, extra = ""): string =>
  `curl -s ${extra}-H ${shellQuote(`${API_KEY_HEADER}: ${key}`)} ${shellQuote(url)}`

const banner = (baseUrl: string): string => {
  const [acme, globex, admin] = Object.entries(DEMO_API_KEYS).map(([key, caller]) => ({ key, caller }))
  const keyLines = Object.entries(DEMO_API_KEYS).map(([key, caller]) => {
    const scope = "tenantId" in caller ? `tenant ${caller.tenantId}` : "no tenant"
    return `  ${key.padEnd(18)} ${caller.name} (${scope}, role ${caller.roles.join(", ")})`
  })
  const q = "from=2025-01-01&to=2025-03-31"
  return [
    "",
    `queryserve analytics demo: ${baseUrl}`,
    `  API reference  ${baseUrl}/docs`,
    `  OpenAPI        ${baseUrl}/openapi.json`,
    "",
    `API keys (header ${API_KEY_HEADER}):`,
    ...keyLines,
    "",
    "Try:",
    `  ${curl(acme!.key, `${baseUrl}/revenueByRegion?${q}`)}`,
    `  ${curl(globex!.key, `${baseUrl}/topProducts?${q}&limit=3`)}`,
    `  ${curl(acme!.key, `${baseUrl}/ordersExport?${q}&maxRows=5`, `-H 'accept: text/csv' `)}`,
    `  ${curl(admin!.key, `${baseUrl}/tenantsOverview`)}`,
    ""
  ].join("\n")
}

const main = async (): Promise<void> => {
  const demo = await createDemoDatabase({ rows: orderRows() })
  const pool = await ConnectionPool.open(demo.instance, POOL_SIZE)
  const api = createAnalyticsApi(createDb(duckDbDriver(pool)))
  const server = await api.start()
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
    pool.closeSync()
    await demo.close()
    console.log("[demo] stopped")
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, (received) => void stop(received))

  // Start-up ends when a real request has been answered: dataset, server and first query warm.
  const [firstKey] = Object.keys(DEMO_API_KEYS)
  const first = await fetch(`${baseUrl}/tenantSummary`, { headers: { [API_KEY_HEADER]: firstKey! } })
  if (!first.ok) throw new Error(`the first request failed: ${first.status} ${await first.text()}`)
  await first.arrayBuffer()

  console.log(banner(baseUrl))
  console.log(`[demo] ready in ${Math.round(performance.now())} ms (process start to first answered request)`)
}

main().catch((error: unknown) => {
  console.error("[demo] failed to start:", error)
  process.exit(1)
})
