/**
 * Deterministic demo dataset in an embedded DuckDB database.
 *
 * Every row is derived from `hash(row number, SEED, stream)`, never from `random()`: DuckDB
 * generates in parallel, and `setseed` only makes `random()` repeatable on one thread, while
 * `hash` gives the same table (for a given DuckDB version) on any number of threads.
 * Money is DECIMAL so sums are exact and independent of summation order.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"

export const TENANTS = [
  { id: "acme", name: "Acme Corporation", plan: "enterprise", share: 0.5, funnel: 1.0 },
  { id: "globex", name: "Globex", plan: "growth", share: 0.3, funnel: 0.8 },
  { id: "initech", name: "Initech", plan: "starter", share: 0.2, funnel: 1.2 }
] as const

export type TenantId = (typeof TENANTS)[number]["id"]

export const TENANT_IDS: readonly TenantId[] = TENANTS.map((t) => t.id)

// Relative weight of each region among customers.
const REGION_WEIGHTS = { na: 4, emea: 3, apac: 2, latam: 1 } as const

export const REGIONS = Object.keys(REGION_WEIGHTS) as ReadonlyArray<keyof typeof REGION_WEIGHTS>

export const FUNNEL_STEPS = ["view", "cart", "checkout", "purchase"] as const

export const TABLES = ["tenants", "customers", "products", "orders", "events"] as const

export type TableName = (typeof TABLES)[number]

export const DEFAULT_ORDER_ROWS = 1_200_000

/** DEMO_ROWS from the environment (the number of order rows), else `fallback`. */
export const orderRowsFromEnv = (fallback: number): number => {
  const text = process.env.DEMO_ROWS
  if (text === undefined || text === "") return fallback
  const rows = Number(text)
  if (!Number.isSafeInteger(rows) || rows < 1) throw new RangeError(`DEMO_ROWS must be a positive integer, got ${text}`)
  return rows
}

const SEED = 2025
const PRODUCTS_PER_TENANT = 50
const MAX_CUSTOMERS = 20_000
// Share of sessions that reach each funnel step, before the tenant's `funnel` factor.
const FUNNEL_REACH = [1, 0.35, 0.21, 0.147] as const

export interface DemoDatabaseOptions {
  /** Number of order rows; customers and sessions scale with it. Default 1,200,000. */
  rows?: number
  /** Progress sink, one line per table. Default: console.log. */
  log?: (line: string) => void
  /** DuckDB database path. Default ':memory:'. */
  path?: string
}

export interface DemoStats {
  /** Per table, in creation order; ms includes the helper tables built for it. */
  readonly tables: ReadonlyArray<{ readonly table: TableName; readonly rows: number; readonly ms: number }>
  readonly totalMs: number
}

export interface DemoDatabase {
  readonly instance: DuckDBInstance
  readonly connection: DuckDBConnection
  readonly stats: DemoStats
  close(): Promise<void>
}

// Only for this file's constants: generation DDL cannot take bound parameters everywhere.
const sqlString = (value: string): string => `'${value.replaceAll("'", "''")}'`

/** Customer id ranges per tenant, proportional to the tenant's share. */
function tenantLayout(customers: number) {
  let next = 1
  return TENANTS.map((tenant, index) => {
    const count =
      index === TENANTS.length - 1 ? customers - next + 1 : Math.round(customers * tenant.share)
    const range = { ...tenant, index, firstCustomer: next, lastCustomer: next + count - 1 }
    next += count
    return range
  })
}

/**
 * Statements in dependency order; those labelled with a table create it. An order or session
 * inherits tenant and region from its customer, so tenants' shares follow their customer counts.
 */
function generationSteps(rows: number): ReadonlyArray<readonly [TableName | null, string]> {
  const customers = Math.min(MAX_CUSTOMERS, Math.max(300, Math.round(rows / 60)))
  const sessions = Math.max(1000, Math.round(rows / 4))
  const layout = tenantLayout(customers)
  const tenantRows = layout
    .map(
      (t) =>
        `(${sqlString(t.id)}, ${sqlString(t.name)}, ${sqlString(t.plan)}, ${t.index}, ` +
        `${t.firstCustomer}, ${t.lastCustomer}, ${t.funnel})`
    )
    .join(",\n      ")
  const regionSlots = REGIONS.flatMap((region) => Array<string>(REGION_WEIGHTS[region]).fill(sqlString(region)))
  // A one-row cross join: as a scalar subquery inside pick() DuckDB re-evaluates it per chunk.
  const slotCount = "(SELECT count(*) AS n FROM gen_slots) slots"
  const steps = FUNNEL_STEPS.map((step, i) => `(${i + 1}, ${sqlString(step)}, ${FUNNEL_REACH[i]})`).join(", ")

  return [
    [
      null,
      // UBIGINT modulus: hash() is UBIGINT, and a signed k would widen the modulo to slow HUGEINT.
      `CREATE OR REPLACE TEMP MACRO pick(n, stream, k) AS (hash(n, ${SEED}, stream) % k::UBIGINT)::BIGINT`
    ],
    [null, `CREATE OR REPLACE TEMP MACRO unit(n, stream) AS pick(n, stream, 1000000) / 1000000`],
    [
      null,
      `CREATE OR REPLACE TEMP TABLE gen_tenants AS
       SELECT * FROM (VALUES
      ${tenantRows}
       ) t(tenant_id, name, plan, tenant_index, first_customer, last_customer, funnel)`
    ],
    [
      "tenants",
      `CREATE OR REPLACE TABLE tenants AS
       SELECT tenant_id, name, plan, DATE '2019-01-01' + tenant_index * 400 AS created_on
       FROM gen_tenants`
    ],
    [
      "customers",
      // active_days: how long the customer keeps ordering after signup (drives retention).
      `CREATE OR REPLACE TABLE customers AS
       SELECT g.tenant_id, c.customer_id,
              'Customer ' || c.customer_id AS name,
              [${regionSlots.join(", ")}][1 + pick(c.customer_id, 1, ${regionSlots.length})] AS region,
              DATE '2025-01-01' + floor(365 * unit(c.customer_id, 2))::INTEGER AS signup_day,
              least(365 - date_diff('day', DATE '2025-01-01', signup_day),
                    20 + floor(345 * unit(c.customer_id, 3) ^ 2)::INTEGER) AS active_days
       FROM range(1, ${customers + 1}) c(customer_id)
       JOIN gen_tenants g ON c.customer_id BETWEEN g.first_customer AND g.last_customer`
    ],
    [
      "products",
      `CREATE OR REPLACE TABLE products AS
       SELECT g.tenant_id,
              g.tenant_index * ${PRODUCTS_PER_TENANT} + k AS product_id,
              ['Compact', 'Classic', 'Premium', 'Smart', 'Eco'][1 + pick(g.tenant_index * 1000 + k, 5, 5)] || ' ' ||
                ['Widget', 'Gadget', 'Sprocket', 'Gizmo', 'Module', 'Sensor', 'Bundle', 'Kit', 'Adapter', 'Console'][1 + (k - 1) % 10] ||
                ' ' || k AS name,
              ['hardware', 'software', 'services', 'accessories', 'support'][1 + (k - 1) % 5] AS category,
              (4.99 + floor(495 * unit(g.tenant_index * 1000 + k, 4) ^ 2))::DECIMAL(10, 2) AS price
       FROM gen_tenants g, range(1, ${PRODUCTS_PER_TENANT + 1}) p(k)`
    ],
    [
      null,
      // One slot per active customer-week. Orders and sessions pick a slot uniformly, so a
      // customer's order count follows how long they stay active, and activity never falls
      // outside their active period (which drives cohort retention). Weeks, not days, keep
      // this join table small.
      `CREATE OR REPLACE TEMP TABLE gen_slots AS
       WITH spans AS (
         SELECT c.*, g.tenant_index, g.funnel, (active_days + 6) // 7 AS weeks,
                (sum(weeks) OVER (ORDER BY customer_id) - weeks)::BIGINT AS first_slot
         FROM customers c JOIN gen_tenants g USING (tenant_id)
       ), week_rows AS (
         SELECT *, unnest(range(weeks)) AS week FROM spans
       )
       SELECT first_slot + week AS slot, customer_id, tenant_id, tenant_index, funnel, region,
              signup_day + (7 * week)::INTEGER AS week_start,
              least(7, active_days - 7 * week) AS week_days
       FROM week_rows`
    ],
    [
      "orders",
      // Popular products get more orders (u^2), most orders are one item, a few carry a discount.
      `CREATE OR REPLACE TABLE orders AS
       WITH picks AS (
         SELECT range AS order_id, pick(range, 10, slots.n) AS slot
         FROM range(1, ${rows + 1}), ${slotCount}
       )
       SELECT s.tenant_id, o.order_id, s.customer_id, p.product_id, s.region,
              s.week_start + pick(o.order_id, 11, s.week_days)::INTEGER AS day,
              1 + floor(4 * unit(o.order_id, 12) ^ 3)::INTEGER AS quantity,
              round(p.price * quantity * CASE WHEN unit(o.order_id, 13) < 0.10 THEN 0.90
                                              WHEN unit(o.order_id, 13) < 0.15 THEN 0.75
                                              ELSE 1 END, 2)::DECIMAL(12, 2) AS amount
       FROM picks o
       JOIN gen_slots s USING (slot)
       JOIN products p
         ON p.product_id = s.tenant_index * ${PRODUCTS_PER_TENANT} + 1
                         + floor(${PRODUCTS_PER_TENANT} * unit(o.order_id, 14) ^ 2)::INTEGER`
    ],
    [
      "events",
      `CREATE OR REPLACE TABLE events AS
       WITH sessions AS (
         SELECT range AS session_id, pick(range, 20, slots.n) AS slot
         FROM range(1, ${sessions + 1}), ${slotCount}
       )
       SELECT s.tenant_id, x.session_id * 4 + st.step_index AS event_id, x.session_id, s.customer_id,
              s.week_start + pick(x.session_id, 21, s.week_days)::INTEGER AS day,
              st.step_index, st.step
       FROM sessions x
       JOIN gen_slots s USING (slot)
       JOIN (VALUES ${steps}) st(step_index, step, reach)
         ON unit(x.session_id, 22) < st.reach * s.funnel`
    ],
    [null, "DROP TABLE gen_slots"],
    [null, "DROP TABLE gen_tenants"],
    [null, "ALTER TABLE customers DROP COLUMN active_days"]
  ]
}

const elapsed = (start: number): number => Math.round(performance.now() - start)

/** Builds the demo tables; generation runs entirely inside DuckDB. */
export async function createDemoDatabase(options: DemoDatabaseOptions = {}): Promise<DemoDatabase> {
  const rows = options.rows ?? DEFAULT_ORDER_ROWS
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer, got ${rows}`)
  const log = options.log ?? console.log
  const started = performance.now()
  const instance = await DuckDBInstance.create(options.path ?? ":memory:")
  const connection = await instance.connect()
  const tables: DemoStats["tables"][number][] = []
  try {
    let lapStart = started
    for (const [table, sql] of generationSteps(rows)) {
      await connection.run(sql)
      if (table === null) continue
      const count = await connection.runAndReadAll(`SELECT count(*)::INTEGER FROM ${table}`)
      const n = Number(count.getRows()[0]?.[0] ?? 0)
      const ms = elapsed(lapStart)
      lapStart = performance.now()
      tables.push({ table, rows: n, ms })
      log(`[demo] ${table}: ${n.toLocaleString("en-US")} rows (${(ms / 1000).toFixed(1)}s)`)
    }
  } catch (error) {
    connection.closeSync()
    instance.closeSync()
    throw error
  }
  const totalMs = elapsed(started)
  log(`[demo] dataset ready in ${(totalMs / 1000).toFixed(1)}s`)
  return {
    instance,
    connection,
    stats: { tables, totalMs },
    close: async () => {
      connection.closeSync()
      instance.closeSync()
    }
  }
}
