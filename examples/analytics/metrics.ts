/**
 * The demo's analytics metrics. Each reads tables only through `db.table()` (directly or as a
 * `db.with()` source), so once the runtime wraps `table()` with the caller's tenant filter, a
 * metric sees that tenant's rows and nothing else. Dates are inclusive 'YYYY-MM-DD' strings. A
 * metric's `signal` (the request's `ctx.signal`) cancels its query.
 */
import { raw, type Db, type TableQuery } from "./sql.js"

export interface DateRange {
  from: string
  to: string
}

export type NoInput = Record<string, never>

export const TOP_PRODUCTS_MAX = 100
export const RETENTION_MONTHS = 5

export const GRANULARITIES = ["day", "week", "month"] as const
export type Granularity = (typeof GRANULARITIES)[number]

function assertIntegerIn(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`)
  }
}

const ordersIn = (db: Db, { from, to }: DateRange): TableQuery =>
  db.table("orders").where("day", "gte", from).where("day", "lte", to)

export type RevenueByDayRow = { day: string; orders: number; revenue: number }

export async function revenueByDay(db: Db, input: DateRange & { region?: string }, signal?: AbortSignal): Promise<RevenueByDayRow[]> {
  const orders = ordersIn(db, input)
  return (input.region === undefined ? orders : orders.where("region", "eq", input.region))
    .select("day", raw("count(*) AS orders"), raw("sum(amount) AS revenue"))
    .groupBy("day")
    .orderBy("day")
    .execute<RevenueByDayRow>(signal)
}

export type RevenueByRegionRow = { region: string; orders: number; customers: number; revenue: number }

export async function revenueByRegion(db: Db, input: DateRange, signal?: AbortSignal): Promise<RevenueByRegionRow[]> {
  return ordersIn(db, input)
    .select(
      "region",
      raw("count(*) AS orders"),
      raw("count(DISTINCT customer_id) AS customers"),
      raw("sum(amount) AS revenue")
    )
    .groupBy("region")
    .orderBy("revenue", "desc")
    .orderBy("region")
    .execute<RevenueByRegionRow>(signal)
}

export type TopProductRow = { product_id: number; product: string; category: string; units: number; revenue: number }

export async function topProducts(db: Db, input: DateRange & { limit?: number }, signal?: AbortSignal): Promise<TopProductRow[]> {
  const limit = input.limit ?? 10
  assertIntegerIn("limit", limit, 1, TOP_PRODUCTS_MAX)
  return db
    .with(
      {
        orders: ordersIn(db, input).select("product_id", "quantity", "amount"),
        products: db.table("products").select("product_id", "name", "category")
      },
      raw(
        `SELECT p.product_id AS product_id, p.name AS product, p.category, sum(o.quantity) AS units, sum(o.amount) AS revenue
         FROM orders o JOIN products p USING (product_id)
         GROUP BY p.product_id, p.name, p.category
         ORDER BY revenue DESC, p.product_id
         LIMIT ?`,
        [limit]
      )
    )
    .execute<TopProductRow>(signal)
}

export type ActiveCustomersRow = { period: string; active_customers: number }

// Fixed fragments, so the granularity never becomes SQL text from input. Weeks start on Monday.
const PERIOD_OF_DAY: Readonly<Record<Granularity, string>> = {
  day: "day AS period",
  week: "CAST(date_trunc('week', day) AS DATE) AS period",
  month: "CAST(date_trunc('month', day) AS DATE) AS period"
}

export async function activeCustomers(
  db: Db,
  input: DateRange & { granularity: Granularity },
  signal?: AbortSignal
): Promise<ActiveCustomersRow[]> {
  if (!Object.hasOwn(PERIOD_OF_DAY, input.granularity)) {
    throw new RangeError(`granularity must be one of ${GRANULARITIES.join(", ")}`)
  }
  return ordersIn(db, input)
    .select(raw(PERIOD_OF_DAY[input.granularity]), raw("count(DISTINCT customer_id) AS active_customers"))
    .groupBy("period")
    .orderBy("period")
    .execute<ActiveCustomersRow>(signal)
}

export type CohortRetentionRow = {
  cohort: string
  cohort_size: number
  month_offset: number
  customers: number
  retention_pct: number
}

/**
 * Customers grouped by the month of their first order (over all their orders), and the share
 * of each cohort that ordered again 0..RETENTION_MONTHS months later. Cohorts are those whose
 * month falls within [from, to]; cells with no returning customer are omitted.
 */
export async function cohortRetention(db: Db, input: DateRange, signal?: AbortSignal): Promise<CohortRetentionRow[]> {
  return db
    .with(
      {
        orders: db.table("orders").select("customer_id", raw("CAST(date_trunc('month', day) AS DATE) AS month")),
        firsts: raw("SELECT customer_id, min(month) AS cohort FROM orders GROUP BY customer_id"),
        sizes: raw("SELECT cohort, count(*) AS cohort_size FROM firsts GROUP BY cohort"),
        activity: raw(
          // Month arithmetic with EXTRACT, which DuckDB and Postgres share (date_diff is DuckDB's).
          `SELECT DISTINCT f.cohort, o.customer_id,
                  (EXTRACT(YEAR FROM o.month) - EXTRACT(YEAR FROM f.cohort)) * 12
                    + EXTRACT(MONTH FROM o.month) - EXTRACT(MONTH FROM f.cohort) AS month_offset
           FROM orders o JOIN firsts f USING (customer_id)`
        )
      },
      raw(
        `SELECT a.cohort, s.cohort_size, a.month_offset, count(*) AS customers,
                round(100.0 * count(*) / s.cohort_size, 2) AS retention_pct
         FROM activity a JOIN sizes s USING (cohort)
         WHERE a.month_offset <= ${RETENTION_MONTHS}
           AND a.cohort BETWEEN date_trunc('month', CAST(? AS DATE)) AND CAST(? AS DATE)
         GROUP BY a.cohort, s.cohort_size, a.month_offset
         ORDER BY a.cohort, a.month_offset`,
        [input.from, input.to]
      )
    )
    .execute<CohortRetentionRow>(signal)
}

export type FunnelRow = {
  step_index: number
  step: string
  sessions: number
  /** Share of the previous step's sessions; 100 for the first step. */
  conversion_pct: number
  /** Share of the first step's sessions. */
  overall_pct: number
}

export async function funnel(db: Db, input: DateRange, signal?: AbortSignal): Promise<FunnelRow[]> {
  const sessions = "count(DISTINCT session_id)"
  return db
    .table("events")
    .where("day", "gte", input.from)
    .where("day", "lte", input.to)
    .select(
      "step_index",
      "step",
      raw(`${sessions} AS sessions`),
      // lag() of the first step is NULL in DuckDB and Postgres, 0 in ClickHouse: nullif() makes it NULL in all three.
      raw(`coalesce(round(100.0 * ${sessions} / nullif(lag(${sessions}) OVER (ORDER BY step_index), 0), 2), 100) AS conversion_pct`),
      raw(`round(100.0 * ${sessions} / first_value(${sessions}) OVER (ORDER BY step_index), 2) AS overall_pct`)
    )
    .groupBy("step_index", "step")
    .orderBy("step_index")
    .execute<FunnelRow>(signal)
}

export type OrderValuePercentilesRow = {
  region: string
  orders: number
  avg: number
  p50: number
  p90: number
  p99: number
}

/**
 * ClickHouse has no quantile_cont. This computes what DuckDB's computes on a DECIMAL column: the
 * linear interpolation at position (n - 1) * q of the sorted amounts, truncated to the cent, with
 * the same double-precision steps, so both databases give the same cents.
 */
const clickHousePercentile = (q: number): string => {
  const position = `(length(cents) - 1) * ${q}`
  const below = `cents[toUInt64(floor(${position})) + 1]`
  const above = `cents[toUInt64(ceil(${position})) + 1]`
  return `(${below} + trunc((${above} - ${below}) * (${position} - floor(${position})))) / 100`
}

export async function orderValuePercentiles(db: Db, input: DateRange, signal?: AbortSignal): Promise<OrderValuePercentilesRow[]> {
  const orders = ordersIn(db, input).select("region", raw("count(*) AS orders"), raw("round(avg(amount), 2) AS avg"))
  if (db.dialect.name === "clickhouse") {
    return db
      .with(
        { sorted: orders.select(raw("arraySort(groupArray(toInt64(amount * 100))) AS cents")).groupBy("region") },
        `SELECT region, orders, avg, ${clickHousePercentile(0.5)} AS p50, ${clickHousePercentile(0.9)} AS p90,
                ${clickHousePercentile(0.99)} AS p99
         FROM sorted ORDER BY region`
      )
      .execute<OrderValuePercentilesRow>(signal)
  }
  return orders
    .select(
      raw("round(quantile_cont(amount, 0.5), 2) AS p50"),
      raw("round(quantile_cont(amount, 0.9), 2) AS p90"),
      raw("round(quantile_cont(amount, 0.99), 2) AS p99")
    )
    .groupBy("region")
    .orderBy("region")
    .execute<OrderValuePercentilesRow>(signal)
}

export type OrdersExportRow = {
  order_id: number
  day: string
  region: string
  product: string
  quantity: number
  amount: number
}

/** The order rows of ordersExport and ordersPage: the caller's orders in the range, oldest order id first. */
const orderRows = (db: Db, input: DateRange & { region?: string }, maxRows?: number) => {
  const inRange = ordersIn(db, input)
  const orders = (input.region === undefined ? inRange : inRange.where("region", "eq", input.region))
    .select("order_id", "day", "region", "product_id", "quantity", "amount")
  return {
    // Limited before the join, so only maxRows orders are looked up.
    orders: maxRows === undefined ? orders : orders.orderBy("order_id").limit(maxRows),
    products: db.table("products").select("product_id", "name")
  }
}

const ORDER_ROWS = `SELECT o.order_id, o.day, o.region, p.name AS product, o.quantity, o.amount
       FROM orders o JOIN products p USING (product_id)
       ORDER BY o.order_id`

/**
 * Every order of the range (or the first `maxRows`), streamed as the database hands them over:
 * DuckDB's result chunks, a Postgres cursor, ClickHouse's stream. Ending the iteration early (the
 * client left) stops the query; so does `signal`.
 */
export function ordersExport(
  db: Db,
  input: DateRange & { maxRows?: number; region?: string },
  signal?: AbortSignal
): AsyncGenerator<OrdersExportRow, void, undefined> {
  if (input.maxRows !== undefined) assertIntegerIn("maxRows", input.maxRows, 1, Number.MAX_SAFE_INTEGER)
  return db.with(orderRows(db, input, input.maxRows), ORDER_ROWS).stream<OrdersExportRow>(signal)
}

/** One page of the same rows: up to `limit + 1` from `offset` (the extra row says a next page exists). */
export async function ordersPage(
  db: Db,
  input: DateRange & { region?: string },
  page: { readonly limit: number; readonly offset: number },
  signal?: AbortSignal
): Promise<OrdersExportRow[]> {
  return db.with(orderRows(db, input), raw(`${ORDER_ROWS} LIMIT ? OFFSET ?`, [page.limit + 1, page.offset])).execute<OrdersExportRow>(signal)
}

export type TenantSummaryRow = {
  tenant_id: string
  name: string
  plan: string
  customers: number
  orders: number
  revenue: number
  avg_order_value: number | null
  first_order_day: string | null
  last_order_day: string | null
}

/** Totals per visible tenant: with the tenant filter, exactly the caller's own. */
export async function tenantSummary(db: Db, _input: NoInput = {}, signal?: AbortSignal): Promise<TenantSummaryRow[]> {
  return db
    .with(
      {
        tenants: db.table("tenants").select("tenant_id", "name", "plan"),
        customers: db.table("customers").select("tenant_id"),
        orders: db.table("orders").select("tenant_id", "day", "amount")
      },
      `SELECT t.tenant_id AS tenant_id, t.name AS name, t.plan AS plan,
              coalesce(c.customers, 0) AS customers, coalesce(o.orders, 0) AS orders,
              coalesce(o.revenue, 0) AS revenue, o.avg_order_value, o.first_order_day, o.last_order_day
       FROM tenants t
       LEFT JOIN (SELECT tenant_id, count(*) AS customers FROM customers GROUP BY tenant_id) c USING (tenant_id)
       LEFT JOIN (SELECT tenant_id, count(*) AS orders, sum(amount) AS revenue,
                         round(avg(amount), 2) AS avg_order_value,
                         min(day) AS first_order_day, max(day) AS last_order_day
                  FROM orders GROUP BY tenant_id) o USING (tenant_id)
       ORDER BY t.tenant_id`
    )
    .execute<TenantSummaryRow>(signal)
}

export type TenantsOverviewRow = {
  tenant_id: string
  orders: number
  active_customers: number
  revenue: number
  revenue_share_pct: number
}

/** Admin metric: every tenant's totals and share of revenue. Run it without the tenant filter. */
export async function tenantsOverview(db: Db, _input: NoInput = {}, signal?: AbortSignal): Promise<TenantsOverviewRow[]> {
  return db
    .table("orders")
    .select(
      "tenant_id",
      raw("count(*) AS orders"),
      raw("count(DISTINCT customer_id) AS active_customers"),
      raw("sum(amount) AS revenue"),
      raw("round(100.0 * sum(amount) / sum(sum(amount)) OVER (), 2) AS revenue_share_pct")
    )
    .groupBy("tenant_id")
    .orderBy("revenue", "desc")
    .orderBy("tenant_id")
    .execute<TenantsOverviewRow>(signal)
}
