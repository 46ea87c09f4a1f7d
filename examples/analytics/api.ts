/**
 * The demo's HTTP API: the metrics of ./metrics.ts as queryserve endpoints. Every endpoint but
 * the admin overview is tenant-scoped through auto-inject: the runtime wraps `ctx.db.table()` so
 * each builder a metric creates is already filtered on `tenant_id` = the caller's tenant.
 */
import {
  apiKeyAuth,
  type AuthFailureLimitOptions,
  initServe,
  type QueryLoggingOption,
  type ServeConfig,
  type SqlExecutor,
  type TenantConfig
} from "queryserve"
import { type AnalyticsCaller, API_KEY_HEADER, DEMO_API_KEYS } from "./demoKeys.js"
import * as metrics from "./metrics.js"
import { ordersDataset } from "./ordersDataset.js"
import * as schemas from "./schemas.js"
import type { Db } from "./sql.js"

export { type AnalyticsCaller, API_KEY_HEADER, DEMO_API_KEYS }

export interface AnalyticsApiOptions<K extends AnalyticsEndpoint = AnalyticsEndpoint> {
  /** API key → caller. Default: DEMO_API_KEYS. */
  readonly keys?: Readonly<Record<string, AnalyticsCaller>>
  /** Default true: one text line per request. */
  readonly queryLogging?: QueryLoggingOption
  /**
   * Serve only these endpoints. For databases whose SQL dialect lacks functions some metrics use
   * (see examples/postgres).
   */
  readonly endpoints?: ReadonlyArray<K>
  /** The server-side result cache; default off (the demo's launcher turns it on). */
  readonly resultCache?: ServeConfig["resultCache"]
  /**
   * Throttling of key guessing. Default DEMO_AUTH_FAILURE_LIMIT: after 10 wrong keys from one address
   * within 15 minutes, that address gets 429 until the window ends, whatever key it sends.
   */
  readonly authFailureLimit?: AuthFailureLimitOptions
  /** Where the endpoints live. Default `/api/analytics`. */
  readonly basePath?: string
  /**
   * Runs the `orders` dataset's statements over the same database: with it, the API also answers
   * questions no endpoint was written for, at `{basePath}/datasets/orders`. Without it, no datasets.
   */
  readonly sql?: SqlExecutor
  /** Replaces the tenant config (the tests try the endpoints under others). */
  readonly tenant?: TenantConfig<AnalyticsCaller>
}

const MINUTE = 60_000

export const DEMO_AUTH_FAILURE_LIMIT: AuthFailureLimitOptions = { max: 10, windowMs: 15 * MINUTE }

const TITLE = "queryserve analytics demo"

/**
 * Everything the endpoints share: `db` in every `ctx`, API-key callers, auto-injected tenant filter,
 * throttled key guessing, docs.
 */
const analyticsServe = (
  db: Db,
  keys: Readonly<Record<string, AnalyticsCaller>>,
  queryLogging: QueryLoggingOption,
  authFailureLimit: AuthFailureLimitOptions
) =>
  initServe({
    context: () => ({ db }),
    auth: apiKeyAuth({ header: API_KEY_HEADER, keys }),
    tenant: { extract: (auth) => auth?.tenantId, column: "tenant_id", mode: "auto-inject" },
    authFailureLimit,
    queryLogging,
    // Prometheus text at /api/analytics/metrics; request counts span tenants, so only admins scrape.
    metrics: { roles: ["admin"] },
    // Every endpoint is also an MCP tool at /api/analytics/mcp, behind the same keys and tenant filter.
    mcp: true,
    docs: { title: TITLE },
    openapi: {
      info: {
        title: TITLE,
        version: "0.1.0",
        description: `Multi-tenant sales metrics. Send an API key in the \`${API_KEY_HEADER}\` header.`,
        license: { name: "MIT", identifier: "MIT" }
      },
      tags: [
        { name: "Revenue", description: "Orders and revenue over a date range, per day, region or order size." },
        { name: "Products", description: "What sells: products ranked by revenue." },
        { name: "Customers", description: "Active customers, monthly cohort retention and the checkout funnel." },
        { name: "Export", description: "Flat order rows for spreadsheets and other tools, as JSON, CSV or NDJSON: all of them streamed, or a page at a time." },
        { name: "Tenants", description: "The caller's own tenant at a glance." },
        { name: "Admin", description: "Across all tenants; needs the admin role." }
      ]
    }
  })

type ProcedureRoot = ReturnType<typeof analyticsServe>["query"]

/**
 * The handler of `metric`, which gets the request's signal: its query stops when the request ends
 * first. After a timeout the 504 is sent and the failure that follows is dropped; a client that
 * left gets no answer, and queryserve logs its request as 499.
 */
const handlerOf =
  <I, A>(metric: (db: Db, input: I, signal: AbortSignal) => Promise<A>) =>
  ({ input, ctx }: { readonly input: I; readonly ctx: { readonly db: Db; readonly signal: AbortSignal } }): Promise<A> =>
    metric(ctx.db, input, ctx.signal)

const analyticsQueries = (query: ProcedureRoot) => {
  const revenue = query.tag("Revenue").cache(MINUTE)
  const customers = query.tag("Customers").cache(5 * MINUTE)

  return {
    revenueByDay: revenue
      .input(schemas.RevenueByDayInput)
      .output(schemas.RevenueByDayOutput)
      .summary("Revenue per day")
      .describe("Orders and revenue for each day of the range, optionally for one region.")
      .query(handlerOf(metrics.revenueByDay)),

    revenueByRegion: revenue
      .input(schemas.DateRangeInput)
      .output(schemas.RevenueByRegionOutput)
      .summary("Revenue per region")
      .describe("Orders, distinct customers and revenue per region over the range, highest revenue first.")
      .query(handlerOf(metrics.revenueByRegion)),

    orderValuePercentiles: revenue
      .input(schemas.DateRangeInput)
      .output(schemas.OrderValuePercentilesOutput)
      .summary("Order value percentiles per region")
      .describe("Average, median, 90th and 99th percentile of the order amount per region.")
      .query(handlerOf(metrics.orderValuePercentiles)),

    topProducts: query
      .tag("Products")
      .cache(MINUTE)
      .input(schemas.TopProductsInput)
      .output(schemas.TopProductsOutput)
      .summary("Best-selling products")
      .describe("Products ranked by revenue over the range, with units sold.")
      .query(handlerOf(metrics.topProducts)),

    activeCustomers: customers
      .input(schemas.ActiveCustomersInput)
      .output(schemas.ActiveCustomersOutput)
      .summary("Active customers per period")
      .describe("Distinct customers with at least one order in each day, week or month of the range.")
      .query(handlerOf(metrics.activeCustomers)),

    cohortRetention: customers
      .input(schemas.DateRangeInput)
      .output(schemas.CohortRetentionOutput)
      .summary("Monthly cohort retention")
      .describe(
        `Customers grouped by the month of their first order; for each cohort month within the range, the share ` +
          `that ordered again 0 to ${metrics.RETENTION_MONTHS} months later.`
      )
      .query(handlerOf(metrics.cohortRetention)),

    funnel: customers
      .input(schemas.DateRangeInput)
      .output(schemas.FunnelOutput)
      .summary("Checkout funnel")
      .describe("Sessions reaching each step (view, cart, checkout, purchase) and the conversion between steps.")
      .query(handlerOf(metrics.funnel)),

    ordersExport: query
      .tag("Export")
      .cache(0)
      .input(schemas.OrdersExportInput)
      .output(schemas.OrdersExportOutput)
      .summary("Orders export")
      .describe(
        "Every order of the range, oldest first, streamed row by row: ask for CSV with `Accept: text/csv` or the `.csv` route. " +
          "Leaving early stops the database query."
      )
      .query(({ input, ctx }) => metrics.ordersExport(ctx.db, input, ctx.signal)),

    ordersPage: query
      .tag("Export")
      .cache(MINUTE)
      .input(schemas.OrdersPageInput)
      .output(schemas.OrdersExportOutput)
      .paginate({ defaultLimit: 50, maxLimit: 1000 })
      .summary("Orders, a page at a time")
      .describe("The rows of the export, a page at a time: follow `page.nextCursor` (or the `Link` header) to the next one.")
      .query(({ input, ctx }) => metrics.ordersPage(ctx.db, input, ctx.page, ctx.signal)),

    tenantSummary: query
      .tag("Tenants")
      .cache(MINUTE)
      .input(schemas.NoInput)
      .output(schemas.TenantSummaryOutput)
      .summary("Your tenant's totals")
      .describe("Customers, orders, revenue and the first and last order day of the caller's tenant.")
      .query(handlerOf(metrics.tenantSummary)),

    tenantsOverview: query
      .tag("Admin")
      .requireRole("admin")
      .tenant(false)
      .cache(MINUTE)
      .input(schemas.NoInput)
      .output(schemas.TenantsOverviewOutput)
      .summary("All tenants (admin)")
      .describe("Every tenant's orders, active customers, revenue and share of revenue. Needs the admin role.")
      .query(handlerOf(metrics.tenantsOverview))
  }
}

type AnalyticsQueries = ReturnType<typeof analyticsQueries>

export type AnalyticsEndpoint = keyof AnalyticsQueries

/** The demo's endpoints over `db`, each at `/api/analytics/<name>`, and with `sql` the `orders` dataset. */
export const createAnalyticsApi = <K extends AnalyticsEndpoint = AnalyticsEndpoint>(
  db: Db,
  options: AnalyticsApiOptions<K> = {}
) => {
  const serve = analyticsServe(db, options.keys ?? DEMO_API_KEYS, options.queryLogging ?? true, options.authFailureLimit ?? DEMO_AUTH_FAILURE_LIMIT)
  const all = analyticsQueries(serve.query)
  const queries: Pick<AnalyticsQueries, K> = options.endpoints === undefined ? all : pick(all, options.endpoints)
  return serve.define({
    queries,
    resultCache: options.resultCache,
    ...(options.sql === undefined ? {} : { datasets: { orders: ordersDataset }, sql: options.sql }),
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    ...(options.tenant === undefined ? {} : { tenant: options.tenant })
  })
}

const pick = <T, K extends keyof T>(record: T, keys: ReadonlyArray<K>): Pick<T, K> => {
  const picked = {} as Pick<T, K>
  for (const key of keys) picked[key] = record[key]
  return picked
}

export type AnalyticsApi = ReturnType<typeof createAnalyticsApi>
