import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDemoDatabase, TABLES, TENANT_IDS, type DemoDatabase } from "../../examples/analytics/dataset.js"
import { ConnectionPool, duckDbDriver } from "../../examples/analytics/duckdb.js"
import * as metrics from "../../examples/analytics/metrics.js"
import { createDb, raw, SqlGuardError, type Db, type Expr, type Row } from "../../examples/analytics/sql.js"
import { PLACEHOLDER_VALUE, STANDARD_PLACEHOLDER_CASES } from "./support/placeholderCases.js"
import { expectOnlyScopedReads, readsThroughEveryKeySpelling, tenantsReadWithRawOr } from "./support/scopeEscapes.js"
import { METRIC_CASES, RANGE, sqlOn, type MetricCase, type Params } from "./support/references.js"

const ROWS = 50_000

let demo: DemoDatabase
let db: Db

beforeAll(async () => {
  demo = await createDemoDatabase({ rows: ROWS, log: () => {} })
  db = createDb(duckDbDriver(demo.connection))
}, 60_000)

afterAll(() => demo.close())

/** What the runtime's tenant 'auto-inject' mode does to a context value exposing table(). */
const scopedTo = (tenant: string): Db => ({
  ...db,
  table: (name) => db.table(name).where("tenant_id", "eq", tenant)
})

const query = (sql: string, params?: Params) => sqlOn(demo.connection)(sql, params)

type Metric = (db: Db, input: object) => Promise<Array<Row>> | AsyncIterable<Row>

/** Every row of a streamed answer. */
const collect = async <T>(rows: AsyncIterable<T>): Promise<Array<T>> => {
  const all: Array<T> = []
  for await (const row of rows) all.push(row)
  return all
}

/** Runs a case's metric directly on `db`, as the endpoint's handler would after input decoding; a stream is read to its end. */
const run = async (db: Db, { endpoint, input }: MetricCase): Promise<Array<Row>> => {
  const answer = (metrics[endpoint] as Metric)(db, input)
  return Symbol.asyncIterator in answer ? collect(answer) : answer
}

const cases = Object.entries(METRIC_CASES)

describe("dataset", () => {
  it("has the requested shape", async () => {
    expect(Object.fromEntries(demo.stats.tables.map((t) => [t.table, t.rows]))).toMatchObject({
      tenants: 3,
      products: 150,
      orders: ROWS
    })
    expect(await query("SELECT DISTINCT tenant_id FROM orders ORDER BY 1")).toEqual(
      TENANT_IDS.map((tenant_id) => ({ tenant_id }))
    )
    const [span] = await query(
      `SELECT year(min(day)) AS first, year(max(day)) AS last, count(DISTINCT day) > 350 AS every_day,
              count(DISTINCT region) AS regions
       FROM orders`
    )
    expect(span).toEqual({ first: 2025, last: 2025, every_day: true, regions: 4 })
    for (const table of TABLES) {
      const columns = await query(`SELECT column_name FROM duckdb_columns() WHERE table_name = $table`, { table })
      expect(columns.map((c) => c.column_name)).toContain("tenant_id")
    }
  })

  it("keeps orders and customers of one tenant together", async () => {
    const [mixed] = await query(
      `SELECT count(*) AS n FROM orders o
       JOIN customers c USING (customer_id) JOIN products p USING (product_id)
       WHERE o.tenant_id <> c.tenant_id OR o.tenant_id <> p.tenant_id OR o.region <> c.region`
    )
    expect(mixed).toEqual({ n: 0 })
  })

  it("is deterministic across runs", async () => {
    const fingerprint = async (connection: DemoDatabase["connection"]) => {
      const parts = TABLES.map((t) => `SELECT '${t}' AS t, count(*)::VARCHAR AS n, bit_xor(hash(x))::VARCHAR AS h FROM ${t} x`)
      return (await connection.runAndReadAll(parts.join(" UNION ALL ") + " ORDER BY t")).getRowObjectsJson()
    }
    const again = await createDemoDatabase({ rows: ROWS, log: () => {} })
    try {
      expect(await fingerprint(again.connection)).toEqual(await fingerprint(demo.connection))
    } finally {
      await again.close()
    }
  })

  it("logs one progress line per table", async () => {
    const lines: string[] = []
    const small = await createDemoDatabase({ rows: 2_000, log: (line) => lines.push(line) })
    await small.close()
    expect(lines.filter((l) => /^\[demo\] \w+: [\d,]+ rows \(\d+\.\ds\)$/.test(l))).toHaveLength(TABLES.length)
    expect(lines.some((l) => /^\[demo\] orders: 2,000 rows /.test(l))).toBe(true)
  })
})

describe("metrics match independent SQL", () => {
  for (const [name, metricCase] of cases) {
    it(name, async () => {
      const rows = await run(db, metricCase)
      expect(rows.length).toBeGreaterThan(0)
      expect(rows).toEqual(await metricCase.reference(query, null))
      // Rows are plain JSON: no BigInt, no DuckDB value objects.
      expect(JSON.parse(JSON.stringify(rows))).toEqual(rows)
    })
  }
})

describe("tenant isolation through a wrapped table()", () => {
  for (const [name, metricCase] of cases) {
    it(`${name}: each tenant sees exactly its own data`, async () => {
      const all = await run(db, metricCase)
      for (const tenant of TENANT_IDS) {
        const rows = await run(scopedTo(tenant), metricCase)
        expect(rows.length).toBeGreaterThan(0)
        expect(rows).toEqual(await metricCase.reference(query, tenant))
        expect(rows).not.toEqual(all)
      }
    })
  }

  it("row-level metrics return no row of another tenant", async () => {
    for (const tenant of TENANT_IDS) {
      const scoped = scopedTo(tenant)
      const orderIds = (await collect(metrics.ordersExport(scoped, { ...RANGE, maxRows: 500 }))).map((r) => r.order_id)
      const productIds = (await metrics.topProducts(scoped, { ...RANGE, limit: 100 })).map((r) => r.product_id)
      const [foreign] = await query(
        `SELECT (SELECT count(*) FROM orders WHERE order_id IN (SELECT unnest($orders::BIGINT[])) AND tenant_id <> $tenant)
              + (SELECT count(*) FROM products WHERE product_id IN (SELECT unnest($products::BIGINT[])) AND tenant_id <> $tenant) AS n`,
        { tenant, orders: `[${orderIds.join(",")}]`, products: `[${productIds.join(",")}]` }
      )
      expect(foreign).toEqual({ n: 0 })
      expect(orderIds).toHaveLength(500)
      for (const metric of [metrics.tenantSummary, metrics.tenantsOverview]) {
        expect((await metric(scoped)).map((r) => r.tenant_id)).toEqual([tenant])
      }
    }
  })

  it("scoped totals add up to the unscoped totals", async () => {
    const total = (rows: metrics.RevenueByRegionRow[]) => rows.reduce((sum, r) => sum + r.orders, 0)
    let sum = 0
    for (const tenant of TENANT_IDS) sum += total(await metrics.revenueByRegion(scopedTo(tenant), RANGE))
    expect(sum).toBe(total(await metrics.revenueByRegion(db, RANGE)))
  })

  it("an unknown tenant sees nothing", async () => {
    const scoped = scopedTo("umbrella")
    for (const [, metricCase] of cases) expect(await run(scoped, metricCase)).toEqual([])
  })
})

describe("values are bound, never spliced", () => {
  const attacks = ["' OR '1'='1", "emea'; DROP TABLE orders; --", 'emea" OR 1=1 --', "1); DELETE FROM orders; --"]

  it("keeps values out of the SQL text", () => {
    const { sql, params } = db.table("orders").where("region", "eq", attacks[0]!).where("day", "in", attacks).limit(3).toSQL()
    expect(sql).toBe('SELECT * FROM "orders" WHERE "region" = ? AND "day" IN (?, ?, ?, ?) LIMIT ?')
    expect(params).toEqual([attacks[0], ...attacks, 3])
  })

  it("matches nothing and changes nothing", async () => {
    for (const attack of attacks) {
      expect(await metrics.revenueByDay(db, { ...RANGE, region: attack })).toEqual([])
      expect(await collect(metrics.ordersExport(db, { ...RANGE, region: attack }))).toEqual([])
      for (const [, metricCase] of cases) expect(await run(scopedTo(attack), metricCase)).toEqual([])
    }
    // A date parameter is cast to DATE: DuckDB reads the leading date and ignores the rest,
    // or rejects the value; either way it never becomes SQL.
    expect(await metrics.revenueByRegion(db, { from: "2025-03-01' OR 1=1 --", to: RANGE.to })).toEqual(
      await metrics.revenueByRegion(db, { from: "2025-03-01", to: RANGE.to })
    )
    await expect(metrics.revenueByRegion(db, { from: "' OR 1=1 --", to: RANGE.to })).rejects.toThrow(
      /Conversion Error/
    )
    expect(await query("SELECT count(*) AS n FROM orders")).toEqual([{ n: ROWS }])
  })
})

describe("query helper", () => {
  it("builders are immutable and conditions compose with AND", async () => {
    const base = db.table("orders").where("tenant_id", "eq", "acme")
    const narrowed = base.where("region", "in", ["emea", "apac"]).select(raw("count(*) AS n"))
    expect(base.toSQL()).toEqual({ sql: 'SELECT * FROM "orders" WHERE "tenant_id" = ?', params: ["acme"] })
    const [expected] = await query(
      `SELECT count(*) AS n FROM orders WHERE tenant_id = 'acme' AND region IN ('emea', 'apac')`
    )
    expect(await narrowed.execute()).toEqual([expected])
    expect(await db.table("orders").where("region", "in", []).select(raw("count(*) AS n")).execute()).toEqual([{ n: 0 }])
  })

  it("rejects hand-written SQL that reads a table around db.table()", async () => {
    const orders = db.table("orders").where("tenant_id", "eq", "acme")
    const attempts = [
      db.with({ orders }, "SELECT count(*) FROM customers"),
      db.with({ orders }, "SELECT count(*) FROM main.orders"),
      db.with({ orders }, "SELECT count(*) FROM orders; SELECT 1"),
      db.with({ orders, everything: raw("SELECT * FROM everything") }, "SELECT count(*) FROM everything"),
      db.with({ orders: raw("SELECT * FROM orders") }, "SELECT count(*) FROM orders"),
      // DuckDB would read the CTE; ClickHouse compares names case-sensitively and reads a table of that name.
      db.with({ orders }, "SELECT count(*) FROM Orders"),
      db.with({ orders }, 'SELECT count(*) FROM "ORDERS"'),
      orders.select(raw("(SELECT count(*) FROM orders) AS leak")),
      orders.select(raw("1 FROM customers --")),
      orders.orderBy(raw("(SELECT max(amount) FROM orders)"))
    ]
    for (const attempt of attempts) await expect(attempt.execute()).rejects.toThrow(SqlGuardError)
  })

  it("refuses every table reference and table function it cannot prove is a db.with() key, however the SQL names it", async () => {
    const orders = db.table("orders").where("tenant_id", "eq", "acme")
    const bodies = [
      // DuckDB's getTableNames() listed no table at all for these: every one ran.
      "SELECT c.tenant_id FROM orders JOIN customers c USING (customer_id)",
      "SELECT count(*) FROM orders NATURAL JOIN customers",
      "SELECT count(*) FROM orders ASOF JOIN customers c ON orders.customer_id >= c.customer_id",
      "SELECT count(*) FROM (PIVOT customers ON tenant_id USING count(*))",
      "SELECT count(*) FROM (UNPIVOT customers ON customer_id INTO NAME k VALUE v)",
      "SELECT count(*) FROM glob('*')",
      "SELECT count(*) FROM read_csv('orders.csv')",
      "SELECT count(*) FROM read_parquet('orders.parquet')",
      "SET threads = 1",
      "PRAGMA version",
      "ATTACH ':memory:' AS other",
      // Listed, and refused before too: kept so a new guard cannot lose them.
      "SELECT count(*) FROM orders POSITIONAL JOIN customers",
      "SELECT count(*) FROM orders, LATERAL (SELECT * FROM customers) c",
      "SELECT count(*) FROM orders, customers",
      "SELECT count(*) FROM query_table('customers')",
      "SELECT count(*) FROM query('SELECT * FROM customers')",
      "SELECT count(*) FROM 'orders.csv'",
      "SELECT (SELECT count(*) FROM customers) FROM orders",
      "SELECT count(*) FROM orders WHERE customer_id IN (SELECT customer_id FROM customers)",
      "SELECT count(*) FROM (SUMMARIZE customers)",
      "SELECT count(*) FROM orders UNION ALL SELECT count(*) FROM customers",
      // A CTE of the body's own hides its name only inside the query that defines it.
      "SELECT count(*) FROM (WITH customers AS (SELECT 1) SELECT * FROM customers) a, customers",
      "SELECT count(*) FROM (WITH mine AS (SELECT * FROM customers) SELECT * FROM mine)",
      "SELECT count(*) FROM (WITH customers AS (SELECT * FROM customers) SELECT * FROM customers)",
      "SELECT count(*) FROM (WITH mine AS (SELECT * FROM customers), customers AS (SELECT 1) SELECT * FROM mine)",
      "SELECT count(*) FROM memory.main.orders",
      "COPY customers TO 'customers.csv'"
    ]
    for (const body of bodies) await expect(db.with({ orders }, body).execute(), body).rejects.toThrow(SqlGuardError)
  })

  it("runs hand-written SQL that reads only db.with() keys, however it joins and nests them", async () => {
    const [acme] = await query("SELECT count(*) AS n FROM orders WHERE tenant_id = 'acme'")
    const sources = {
      orders: db.table("orders").where("tenant_id", "eq", "acme"),
      customers: db.table("customers").where("tenant_id", "eq", "acme")
    }
    const bodies = [
      "SELECT count(*) AS n FROM orders JOIN customers c USING (customer_id, tenant_id)",
      "SELECT count(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.customer_id AND o.tenant_id = c.tenant_id",
      'SELECT count(*) AS n FROM "orders"',
      "SELECT (SELECT count(*) FROM orders) AS n",
      "SELECT count(*) AS n FROM (WITH mine AS (SELECT * FROM orders) SELECT * FROM mine)",
      "SELECT sum(n) AS n FROM (SELECT count(*) AS n FROM orders UNION ALL SELECT 0 FROM (VALUES (1)) v(x))"
    ]
    for (const body of bodies) expect(await db.with(sources, body).execute(), body).toEqual([{ n: acme?.n }])
  })

  it("remembers an approval only for the names it was given: the same text with fewer sources is still refused", async () => {
    const body = "SELECT count(*) AS n FROM orders JOIN customers c USING (customer_id, tenant_id)"
    const orders = db.table("orders").where("tenant_id", "eq", "acme")
    const customers = db.table("customers").where("tenant_id", "eq", "acme")
    for (let run = 0; run < 2; run++) {
      await expect(db.with({ orders, customers }, body).execute()).resolves.toHaveLength(1)
      await expect(db.with({ orders }, body).execute()).rejects.toThrow(SqlGuardError)
    }
  })

  it("refuses a db.with() key that is not a lower-case name where it is defined: Postgres and ClickHouse would not see it as that table", () => {
    const orders = db.table("orders")
    for (const key of ["Orders", "ORDERS", "orderS"]) {
      expect(() => db.with({ [key]: orders }, "SELECT 1")).toThrow(`db.with() key "${key}" must be a lower-case name`)
    }
    expect(() => db.with({ orders_2025: orders, _tmp: raw("SELECT 1") }, "SELECT 1")).not.toThrow()
  })

  it("a db.with() key shadows its table however the body spells it, or is refused", async () => {
    const [acme] = await query("SELECT count(*) AS n FROM orders WHERE tenant_id = 'acme'")
    expectOnlyScopedReads(await readsThroughEveryKeySpelling(db, "acme"), Number(acme?.n))
  })

  it("writes a raw() condition in parentheses: an OR inside it cannot escape the tenant condition", async () => {
    const sql = (column: Expr) => scopedTo("acme").table("orders").where(column, "gte", 1000).toSQL().sql
    expect(sql(raw("discount > 0 OR amount"))).toBe('SELECT * FROM "orders" WHERE "tenant_id" = ? AND (discount > 0 OR amount >= ?)')
    expect(sql("amount")).toBe('SELECT * FROM "orders" WHERE "tenant_id" = ? AND "amount" >= ?')
    const inList = scopedTo("acme").table("orders").where(raw("quantity > 1 OR region"), "in", ["emea"]).toSQL().sql
    expect(inList).toBe('SELECT * FROM "orders" WHERE "tenant_id" = ? AND (quantity > 1 OR region IN (?))')
    for (const tenant of TENANT_IDS) expect(await tenantsReadWithRawOr(db, tenant)).toEqual([tenant])
  })

  it("refuses a raw() fragment whose parentheses do not balance: it could close the ones around it", async () => {
    const orders = scopedTo("acme").table("orders")
    const attempts = [
      () => orders.where(raw("1) OR (1"), "eq", 1),
      () => orders.where(raw("amount >= 0 OR (1"), "eq", 1),
      () => orders.select(raw("count(*) AS n)")),
      () => orders.orderBy(raw("(amount")),
      () => db.with({ orders }, "SELECT count(*) FROM orders)"),
      () => db.with({ orders, more: raw("SELECT * FROM orders) , (SELECT 1") }, "SELECT 1")
    ]
    for (const attempt of attempts) {
      await expect(attempt().execute(), String(attempt)).rejects.toThrow(/parentheses that do not balance/)
    }
    // Parentheses inside quotes, quoted names and comments are text.
    const counted = orders.where(raw("strlen(')(' || region) /* ( */"), "gt", 0).select(raw('count(*) AS "n)("'))
    expect(await counted.execute()).toEqual([{ "n)(": (await orders.select(raw("count(*) AS n")).execute())[0]!.n }])
  })

  it("checks identifiers, values and placeholders", () => {
    expect(() => db.table("orders; DROP TABLE orders")).toThrow(/identifier/)
    expect(() => db.table("orders").select("amount) FROM customers --")).toThrow(/identifier/)
    expect(() => db.table("orders").orderBy("amount; --")).toThrow(/identifier/)
    expect(() => db.table("orders").where("day", "eq", Number.NaN)).toThrow(TypeError)
    expect(() => db.table("orders").where("day", "in", "emea" as never)).toThrow(TypeError)
    expect(() => db.table("orders").where("day", "like" as never, "x")).toThrow(TypeError)
  })

  it("counts a fragment's placeholders as DuckDB reads quotes and comments", async () => {
    const orders = db.table("orders").where("tenant_id", "eq", "acme")
    await expect(orders.select(raw("amount > ?")).execute()).rejects.toThrow(/1 placeholder\(s\) but 0 param\(s\)/)
    await expect(orders.select(raw("count(*) AS n -- all of them")).execute()).rejects.toThrow(/ends inside quotes or a comment/)
    for (const [sql, row] of STANDARD_PLACEHOLDER_CASES) {
      expect(await db.with({}, raw(sql, [PLACEHOLDER_VALUE])).execute(), sql).toEqual([row])
    }
  })

  it("validates metric bounds", async () => {
    await expect(metrics.topProducts(db, { ...RANGE, limit: 101 })).rejects.toThrow(RangeError)
    expect(() => metrics.ordersExport(db, { ...RANGE, maxRows: 0 })).toThrow(RangeError)
    await expect(metrics.activeCustomers(db, { ...RANGE, granularity: "year" as never })).rejects.toThrow(RangeError)
  })
})

describe("connection pool", () => {
  it("runs at most one statement per connection and queues the rest in order", async () => {
    const pool = await ConnectionPool.open(demo.instance, 2)
    try {
      let active = 0
      let busiest = 0
      const started: Array<number> = []
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          pool.use(async (connection) => {
            started.push(i)
            busiest = Math.max(busiest, ++active)
            await connection.run("SELECT count(*) FROM orders")
            active--
          })
        )
      )
      expect(busiest).toBe(2)
      expect(started).toEqual([0, 1, 2, 3, 4, 5])
    } finally {
      pool.closeSync()
    }
  })

  it("gives the same answers as one connection, under concurrency", async () => {
    const pool = await ConnectionPool.open(demo.instance, 3)
    try {
      const pooled = createDb(duckDbDriver(pool))
      const answers = await Promise.all(cases.map(([, metricCase]) => run(pooled, metricCase)))
      for (const [i, [, metricCase]] of cases.entries()) expect(answers[i]).toEqual(await run(db, metricCase))
    } finally {
      pool.closeSync()
    }
  })
})
