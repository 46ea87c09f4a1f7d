/**
 * Independent answers for the demo's metrics: SQL written straight against the tables, without the
 * query helper, read with node-api's own converter. Shared by the metric tests and the HTTP tests.
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import type { AnalyticsEndpoint } from "../../../examples/analytics/api.js"

export type Params = Record<string, string | number | null>
export type Rows = Array<Record<string, unknown>>
export type SqlQuery = (sql: string, params?: Params) => Promise<Rows>

/** Runs SQL on `connection`; BIGINT becomes a number and DATE 'YYYY-MM-DD', as the API returns them. */
export const sqlOn = (connection: DuckDBConnection): SqlQuery => async (sql, params = {}) => {
  const reader = await connection.runAndReadAll(sql, params)
  return reader.getRowObjectsJS().map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === "bigint" ? Number(value) : value instanceof Date ? value.toISOString().slice(0, 10) : value
      ])
    )
  )
}

export const RANGE = { from: "2025-02-01", to: "2025-06-30" }

// `$tenant` NULL means all tenants.
const TENANT = "($tenant::VARCHAR IS NULL OR tenant_id = $tenant)"
const IN_RANGE = "day BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)"

export interface MetricCase {
  readonly endpoint: AnalyticsEndpoint
  /** The metric's input, as a caller sends it (numbers go on the query string as text). */
  readonly input: Readonly<Record<string, string | number>>
  /** The rows `tenant` should get; null: every tenant's. */
  readonly reference: (query: SqlQuery, tenant: string | null) => Promise<Rows>
}

/** The oldest `count` orders of the range, as ordersExport and ordersPage give them. */
const firstOrders = (query: SqlQuery, tenant: string | null, count: number): Promise<Rows> =>
  query(
    `SELECT o.order_id, o.day, o.region, p.name AS product, o.quantity, o.amount
     FROM orders o JOIN products p ON p.product_id = o.product_id
     WHERE ($tenant::VARCHAR IS NULL OR o.tenant_id = $tenant) AND o.${IN_RANGE}
     ORDER BY o.order_id LIMIT ${count}`,
    { tenant, ...RANGE }
  )

export const METRIC_CASES: Readonly<Record<string, MetricCase>> = {
  revenueByDay: {
    endpoint: "revenueByDay",
    input: { ...RANGE, region: "emea" },
    reference: (query, tenant) =>
      query(
        `SELECT day, count(*) AS orders, sum(amount) AS revenue FROM orders
         WHERE ${TENANT} AND ${IN_RANGE} AND region = 'emea' GROUP BY day ORDER BY day`,
        { tenant, ...RANGE }
      )
  },
  revenueByRegion: {
    endpoint: "revenueByRegion",
    input: RANGE,
    reference: (query, tenant) =>
      query(
        `SELECT region, count(*) AS orders, count(DISTINCT customer_id) AS customers, sum(amount) AS revenue
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY region ORDER BY revenue DESC, region`,
        { tenant, ...RANGE }
      )
  },
  topProducts: {
    endpoint: "topProducts",
    input: { ...RANGE, limit: 7 },
    reference: (query, tenant) =>
      query(
        `SELECT p.product_id, p.name AS product, p.category, sum(o.quantity) AS units, sum(o.amount) AS revenue
         FROM orders o JOIN products p ON p.product_id = o.product_id AND p.tenant_id = o.tenant_id
         WHERE ($tenant::VARCHAR IS NULL OR o.tenant_id = $tenant) AND o.${IN_RANGE}
         GROUP BY ALL ORDER BY revenue DESC, p.product_id LIMIT 7`,
        { tenant, ...RANGE }
      )
  },
  activeCustomersWeekly: {
    endpoint: "activeCustomers",
    input: { ...RANGE, granularity: "week" },
    reference: (query, tenant) =>
      query(
        `SELECT day - (isodow(day) - 1)::INTEGER AS period, count(DISTINCT customer_id) AS active_customers
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY 1 ORDER BY 1`,
        { tenant, ...RANGE }
      )
  },
  activeCustomersMonthly: {
    endpoint: "activeCustomers",
    input: { ...RANGE, granularity: "month" },
    reference: (query, tenant) =>
      query(
        `SELECT make_date(year(day), month(day), 1) AS period, count(DISTINCT customer_id) AS active_customers
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY 1 ORDER BY 1`,
        { tenant, ...RANGE }
      )
  },
  cohortRetention: {
    endpoint: "cohortRetention",
    input: RANGE,
    reference: (query, tenant) =>
      query(
        `WITH o AS (
           SELECT customer_id, make_date(year(day), month(day), 1) AS m,
                  min(make_date(year(day), month(day), 1)) OVER (PARTITION BY customer_id) AS cohort
           FROM orders WHERE ${TENANT}
         ), x AS (
           SELECT cohort, (year(m) - year(cohort)) * 12 + month(m) - month(cohort) AS k,
                  count(DISTINCT customer_id) AS n
           FROM o GROUP BY ALL
         )
         SELECT x.cohort, s.n AS cohort_size, x.k AS month_offset, x.n AS customers,
                round(100.0 * x.n / s.n, 2) AS retention_pct
         FROM x JOIN x s ON s.cohort = x.cohort AND s.k = 0
         WHERE x.k <= 5 AND x.cohort BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
         ORDER BY x.cohort, x.k`,
        { tenant, ...RANGE }
      )
  },
  funnel: {
    endpoint: "funnel",
    input: RANGE,
    reference: (query, tenant) =>
      query(
        `WITH s AS (
           SELECT step_index, step, count(DISTINCT session_id) AS n FROM events
           WHERE ${TENANT} AND ${IN_RANGE} GROUP BY ALL
         )
         SELECT step_index, step, n AS sessions,
                coalesce(round(100.0 * n / lag(n) OVER (ORDER BY step_index), 2), 100) AS conversion_pct,
                round(100.0 * n / (SELECT n FROM s WHERE step_index = 1), 2) AS overall_pct
         FROM s ORDER BY step_index`,
        { tenant, ...RANGE }
      )
  },
  orderValuePercentiles: {
    endpoint: "orderValuePercentiles",
    input: RANGE,
    reference: async (query, tenant) =>
      (
        await query(
          `SELECT region, count(*) AS orders, round(avg(amount), 2) AS avg,
                  list_transform(quantile_cont(amount, [0.5, 0.9, 0.99]), q -> round(q, 2)) AS q
           FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY region ORDER BY region`,
          { tenant, ...RANGE }
        )
      ).map(({ q, ...row }) => {
        const [p50, p90, p99] = q as Array<number>
        return { ...row, p50, p90, p99 }
      })
  },
  ordersExport: {
    endpoint: "ordersExport",
    input: { ...RANGE, maxRows: 40 },
    reference: (query, tenant) => firstOrders(query, tenant, 40)
  },
  tenantSummary: {
    endpoint: "tenantSummary",
    input: {},
    reference: (query, tenant) =>
      query(
        `SELECT t.tenant_id, t.name, t.plan,
                (SELECT count(*) FROM customers c WHERE c.tenant_id = t.tenant_id) AS customers,
                (SELECT count(*) FROM orders o WHERE o.tenant_id = t.tenant_id) AS orders,
                (SELECT sum(amount) FROM orders o WHERE o.tenant_id = t.tenant_id) AS revenue,
                (SELECT round(avg(amount), 2) FROM orders o WHERE o.tenant_id = t.tenant_id) AS avg_order_value,
                (SELECT min(day) FROM orders o WHERE o.tenant_id = t.tenant_id) AS first_order_day,
                (SELECT max(day) FROM orders o WHERE o.tenant_id = t.tenant_id) AS last_order_day
         FROM tenants t WHERE ${TENANT} ORDER BY t.tenant_id`,
        { tenant }
      )
  },
  tenantsOverview: {
    endpoint: "tenantsOverview",
    input: {},
    reference: (query, tenant) =>
      query(
        `SELECT tenant_id, count(*) AS orders, count(DISTINCT customer_id) AS active_customers, sum(amount) AS revenue,
                round(100.0 * sum(amount) / (SELECT sum(amount) FROM orders WHERE ${TENANT}), 2) AS revenue_share_pct
         FROM orders WHERE ${TENANT} GROUP BY tenant_id ORDER BY revenue DESC, tenant_id`,
        { tenant }
      )
  }
}

/** Endpoints that answer a page (`{ data, page }`): the reference is the first page's `data`. */
export const PAGED_CASES: Readonly<Record<string, MetricCase>> = {
  ordersPage: {
    endpoint: "ordersPage",
    input: { ...RANGE, limit: 40 },
    reference: (query, tenant) => firstOrders(query, tenant, 40)
  }
}

/** Every case a tenant suite sends: the metrics and the first page of each paged endpoint. */
export const TENANT_CASES: Readonly<Record<string, MetricCase>> = { ...METRIC_CASES, ...PAGED_CASES }
