import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoDatabase, TABLES, TENANT_IDS, type DemoDatabase } from '../examples/analytics/dataset.js';
import * as metrics from '../examples/analytics/metrics.js';
import { createDb, raw, SqlGuardError, type Db, type Row } from '../examples/analytics/sql.js';

const ROWS = 50_000;
const RANGE = { from: '2025-02-01', to: '2025-06-30' };

let demo: DemoDatabase;
let db: Db;

beforeAll(async () => {
  demo = await createDemoDatabase({ rows: ROWS, log: () => {} });
  db = createDb(demo.connection);
}, 60_000);

afterAll(() => demo.close());

/** What the runtime's tenant 'auto-inject' mode does to a context value exposing table(). */
const scopedTo = (tenant: string): Db => ({
  ...db,
  table: (name) => db.table(name).where('tenant_id', 'eq', tenant),
});

type Params = Record<string, string | number | null>;

/** Independent SQL straight on the connection, read with node-api's own JS converter. */
async function query(sql: string, params: Params = {}): Promise<Record<string, unknown>[]> {
  const reader = await demo.connection.runAndReadAll(sql, params);
  return reader.getRowObjectsJS().map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'bigint' ? Number(value) : value instanceof Date ? value.toISOString().slice(0, 10) : value,
      ]),
    ),
  );
}

// `$tenant` NULL means all tenants.
const TENANT = '($tenant::VARCHAR IS NULL OR tenant_id = $tenant)';
const IN_RANGE = 'day BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)';

interface MetricCase {
  readonly run: (db: Db) => Promise<Row[]>;
  readonly reference: (tenant: string | null) => Promise<Record<string, unknown>[]>;
}

const cases: Record<string, MetricCase> = {
  revenueByDay: {
    run: (d) => metrics.revenueByDay(d, { ...RANGE, region: 'emea' }),
    reference: (tenant) =>
      query(
        `SELECT day, count(*) AS orders, sum(amount) AS revenue FROM orders
         WHERE ${TENANT} AND ${IN_RANGE} AND region = 'emea' GROUP BY day ORDER BY day`,
        { tenant, ...RANGE },
      ),
  },
  revenueByRegion: {
    run: (d) => metrics.revenueByRegion(d, RANGE),
    reference: (tenant) =>
      query(
        `SELECT region, count(*) AS orders, count(DISTINCT customer_id) AS customers, sum(amount) AS revenue
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY region ORDER BY revenue DESC, region`,
        { tenant, ...RANGE },
      ),
  },
  topProducts: {
    run: (d) => metrics.topProducts(d, { ...RANGE, limit: 7 }),
    reference: (tenant) =>
      query(
        `SELECT p.product_id, p.name AS product, p.category, sum(o.quantity) AS units, sum(o.amount) AS revenue
         FROM orders o JOIN products p ON p.product_id = o.product_id AND p.tenant_id = o.tenant_id
         WHERE ($tenant::VARCHAR IS NULL OR o.tenant_id = $tenant) AND o.${IN_RANGE}
         GROUP BY ALL ORDER BY revenue DESC, p.product_id LIMIT 7`,
        { tenant, ...RANGE },
      ),
  },
  activeCustomersWeekly: {
    run: (d) => metrics.activeCustomers(d, { ...RANGE, granularity: 'week' }),
    reference: (tenant) =>
      query(
        `SELECT day - (isodow(day) - 1)::INTEGER AS period, count(DISTINCT customer_id) AS active_customers
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY 1 ORDER BY 1`,
        { tenant, ...RANGE },
      ),
  },
  activeCustomersMonthly: {
    run: (d) => metrics.activeCustomers(d, { ...RANGE, granularity: 'month' }),
    reference: (tenant) =>
      query(
        `SELECT make_date(year(day), month(day), 1) AS period, count(DISTINCT customer_id) AS active_customers
         FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY 1 ORDER BY 1`,
        { tenant, ...RANGE },
      ),
  },
  cohortRetention: {
    run: (d) => metrics.cohortRetention(d, RANGE),
    reference: (tenant) =>
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
        { tenant, ...RANGE },
      ),
  },
  funnel: {
    run: (d) => metrics.funnel(d, RANGE),
    reference: (tenant) =>
      query(
        `WITH s AS (
           SELECT step_index, step, count(DISTINCT session_id) AS n FROM events
           WHERE ${TENANT} AND ${IN_RANGE} GROUP BY ALL
         )
         SELECT step_index, step, n AS sessions,
                coalesce(round(100.0 * n / lag(n) OVER (ORDER BY step_index), 2), 100) AS conversion_pct,
                round(100.0 * n / (SELECT n FROM s WHERE step_index = 1), 2) AS overall_pct
         FROM s ORDER BY step_index`,
        { tenant, ...RANGE },
      ),
  },
  orderValuePercentiles: {
    run: (d) => metrics.orderValuePercentiles(d, RANGE),
    reference: async (tenant) =>
      (
        await query(
          `SELECT region, count(*) AS orders, round(avg(amount), 2) AS avg,
                  list_transform(quantile_cont(amount, [0.5, 0.9, 0.99]), q -> round(q, 2)) AS q
           FROM orders WHERE ${TENANT} AND ${IN_RANGE} GROUP BY region ORDER BY region`,
          { tenant, ...RANGE },
        )
      ).map(({ q, ...row }) => {
        const [p50, p90, p99] = q as number[];
        return { ...row, p50, p90, p99 };
      }),
  },
  ordersExport: {
    run: (d) => metrics.ordersExport(d, { ...RANGE, maxRows: 40 }),
    reference: (tenant) =>
      query(
        `SELECT o.order_id, o.day, o.region, p.name AS product, o.quantity, o.amount
         FROM orders o JOIN products p ON p.product_id = o.product_id
         WHERE ($tenant::VARCHAR IS NULL OR o.tenant_id = $tenant) AND o.${IN_RANGE}
         ORDER BY o.order_id LIMIT 40`,
        { tenant, ...RANGE },
      ),
  },
  tenantSummary: {
    run: (d) => metrics.tenantSummary(d),
    reference: (tenant) =>
      query(
        `SELECT t.tenant_id, t.name, t.plan,
                (SELECT count(*) FROM customers c WHERE c.tenant_id = t.tenant_id) AS customers,
                (SELECT count(*) FROM orders o WHERE o.tenant_id = t.tenant_id) AS orders,
                (SELECT sum(amount) FROM orders o WHERE o.tenant_id = t.tenant_id) AS revenue,
                (SELECT round(avg(amount), 2) FROM orders o WHERE o.tenant_id = t.tenant_id) AS avg_order_value,
                (SELECT min(day) FROM orders o WHERE o.tenant_id = t.tenant_id) AS first_order_day,
                (SELECT max(day) FROM orders o WHERE o.tenant_id = t.tenant_id) AS last_order_day
         FROM tenants t WHERE ${TENANT} ORDER BY t.tenant_id`,
        { tenant },
      ),
  },
  tenantsOverview: {
    run: (d) => metrics.tenantsOverview(d),
    reference: (tenant) =>
      query(
        `SELECT tenant_id, count(*) AS orders, count(DISTINCT customer_id) AS active_customers, sum(amount) AS revenue,
                round(100.0 * sum(amount) / (SELECT sum(amount) FROM orders WHERE ${TENANT}), 2) AS revenue_share_pct
         FROM orders WHERE ${TENANT} GROUP BY tenant_id ORDER BY revenue DESC, tenant_id`,
        { tenant },
      ),
  },
};

describe('dataset', () => {
  it('has the requested shape', async () => {
    expect(Object.fromEntries(demo.stats.tables.map((t) => [t.table, t.rows]))).toMatchObject({
      tenants: 3,
      products: 150,
      orders: ROWS,
    });
    expect(await query('SELECT DISTINCT tenant_id FROM orders ORDER BY 1')).toEqual(
      TENANT_IDS.map((tenant_id) => ({ tenant_id })),
    );
    const [span] = await query(
      `SELECT year(min(day)) AS first, year(max(day)) AS last, count(DISTINCT day) > 350 AS every_day,
              count(DISTINCT region) AS regions
       FROM orders`,
    );
    expect(span).toEqual({ first: 2025, last: 2025, every_day: true, regions: 4 });
    for (const table of TABLES) {
      const columns = await query(`SELECT column_name FROM duckdb_columns() WHERE table_name = $table`, { table });
      expect(columns.map((c) => c.column_name)).toContain('tenant_id');
    }
  });

  it('keeps orders and customers of one tenant together', async () => {
    const [mixed] = await query(
      `SELECT count(*) AS n FROM orders o
       JOIN customers c USING (customer_id) JOIN products p USING (product_id)
       WHERE o.tenant_id <> c.tenant_id OR o.tenant_id <> p.tenant_id OR o.region <> c.region`,
    );
    expect(mixed).toEqual({ n: 0 });
  });

  it('is deterministic across runs', async () => {
    const fingerprint = async (connection: DemoDatabase['connection']) => {
      const parts = TABLES.map((t) => `SELECT '${t}' AS t, count(*)::VARCHAR AS n, bit_xor(hash(x))::VARCHAR AS h FROM ${t} x`);
      return (await connection.runAndReadAll(parts.join(' UNION ALL ') + ' ORDER BY t')).getRowObjectsJson();
    };
    const again = await createDemoDatabase({ rows: ROWS, log: () => {} });
    try {
      expect(await fingerprint(again.connection)).toEqual(await fingerprint(demo.connection));
    } finally {
      await again.close();
    }
  });

  it('logs one progress line per table', async () => {
    const lines: string[] = [];
    const small = await createDemoDatabase({ rows: 2_000, log: (line) => lines.push(line) });
    await small.close();
    expect(lines.filter((l) => /^\[demo\] \w+: [\d,]+ rows \(\d+\.\ds\)$/.test(l))).toHaveLength(TABLES.length);
    expect(lines.some((l) => /^\[demo\] orders: 2,000 rows /.test(l))).toBe(true);
  });
});

describe('metrics match independent SQL', () => {
  for (const [name, { run, reference }] of Object.entries(cases)) {
    it(name, async () => {
      const rows = await run(db);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows).toEqual(await reference(null));
      // Rows are plain JSON: no BigInt, no DuckDB value objects.
      expect(JSON.parse(JSON.stringify(rows))).toEqual(rows);
    });
  }
});

describe('tenant isolation through a wrapped table()', () => {
  for (const [name, { run, reference }] of Object.entries(cases)) {
    it(`${name}: each tenant sees exactly its own data`, async () => {
      const all = await run(db);
      for (const tenant of TENANT_IDS) {
        const rows = await run(scopedTo(tenant));
        expect(rows.length).toBeGreaterThan(0);
        expect(rows).toEqual(await reference(tenant));
        expect(rows).not.toEqual(all);
      }
    });
  }

  it('row-level metrics return no row of another tenant', async () => {
    for (const tenant of TENANT_IDS) {
      const scoped = scopedTo(tenant);
      const orderIds = (await metrics.ordersExport(scoped, { ...RANGE, maxRows: 500 })).map((r) => r.order_id);
      const productIds = (await metrics.topProducts(scoped, { ...RANGE, limit: 100 })).map((r) => r.product_id);
      const [foreign] = await query(
        `SELECT (SELECT count(*) FROM orders WHERE order_id IN (SELECT unnest($orders::BIGINT[])) AND tenant_id <> $tenant)
              + (SELECT count(*) FROM products WHERE product_id IN (SELECT unnest($products::BIGINT[])) AND tenant_id <> $tenant) AS n`,
        { tenant, orders: `[${orderIds.join(',')}]`, products: `[${productIds.join(',')}]` },
      );
      expect(foreign).toEqual({ n: 0 });
      expect(orderIds).toHaveLength(500);
      for (const metric of [metrics.tenantSummary, metrics.tenantsOverview]) {
        expect((await metric(scoped)).map((r) => r.tenant_id)).toEqual([tenant]);
      }
    }
  });

  it('scoped totals add up to the unscoped totals', async () => {
    const total = (rows: metrics.RevenueByRegionRow[]) => rows.reduce((sum, r) => sum + r.orders, 0);
    let sum = 0;
    for (const tenant of TENANT_IDS) sum += total(await metrics.revenueByRegion(scopedTo(tenant), RANGE));
    expect(sum).toBe(total(await metrics.revenueByRegion(db, RANGE)));
  });

  it('an unknown tenant sees nothing', async () => {
    const scoped = scopedTo('umbrella');
    for (const { run } of Object.values(cases)) expect(await run(scoped)).toEqual([]);
  });
});

describe('values are bound, never spliced', () => {
  const attacks = ["' OR '1'='1", "emea'; DROP TABLE orders; --", 'emea" OR 1=1 --', '1); DELETE FROM orders; --'];

  it('keeps values out of the SQL text', () => {
    const { sql, params } = db.table('orders').where('region', 'eq', attacks[0]!).where('day', 'in', attacks).limit(3).toSQL();
    expect(sql).toBe('SELECT * FROM "orders" WHERE "region" = ? AND "day" IN (?, ?, ?, ?) LIMIT ?');
    expect(params).toEqual([attacks[0], ...attacks, 3]);
  });

  it('matches nothing and changes nothing', async () => {
    for (const attack of attacks) {
      expect(await metrics.revenueByDay(db, { ...RANGE, region: attack })).toEqual([]);
      expect(await metrics.ordersExport(db, { ...RANGE, region: attack })).toEqual([]);
      for (const { run } of Object.values(cases)) expect(await run(scopedTo(attack))).toEqual([]);
    }
    // A date parameter is cast to DATE: DuckDB reads the leading date and ignores the rest,
    // or rejects the value; either way it never becomes SQL.
    expect(await metrics.revenueByRegion(db, { from: "2025-03-01' OR 1=1 --", to: RANGE.to })).toEqual(
      await metrics.revenueByRegion(db, { from: '2025-03-01', to: RANGE.to }),
    );
    await expect(metrics.revenueByRegion(db, { from: "' OR 1=1 --", to: RANGE.to })).rejects.toThrow(
      /Conversion Error/,
    );
    expect(await query('SELECT count(*) AS n FROM orders')).toEqual([{ n: ROWS }]);
  });
});

describe('query helper', () => {
  it('builders are immutable and conditions compose with AND', async () => {
    const base = db.table('orders').where('tenant_id', 'eq', 'acme');
    const narrowed = base.where('region', 'in', ['emea', 'apac']).select(raw('count(*) AS n'));
    expect(base.toSQL()).toEqual({ sql: 'SELECT * FROM "orders" WHERE "tenant_id" = ?', params: ['acme'] });
    const [expected] = await query(
      `SELECT count(*) AS n FROM orders WHERE tenant_id = 'acme' AND region IN ('emea', 'apac')`,
    );
    expect(await narrowed.execute()).toEqual([expected]);
    expect(await db.table('orders').where('region', 'in', []).select(raw('count(*) AS n')).execute()).toEqual([{ n: 0 }]);
  });

  it('rejects hand-written SQL that reads a table around db.table()', async () => {
    const orders = db.table('orders').where('tenant_id', 'eq', 'acme');
    const attempts = [
      db.with({ orders }, 'SELECT count(*) FROM customers'),
      db.with({ orders }, 'SELECT count(*) FROM main.orders'),
      db.with({ orders }, 'SELECT count(*) FROM orders; SELECT 1'),
      db.with({ orders, everything: raw('SELECT * FROM everything') }, 'SELECT count(*) FROM everything'),
      db.with({ orders: raw('SELECT * FROM orders') }, 'SELECT count(*) FROM orders'),
      orders.select(raw('(SELECT count(*) FROM orders) AS leak')),
      orders.select(raw('1 FROM customers --')),
      orders.orderBy(raw('(SELECT max(amount) FROM orders)')),
    ];
    for (const attempt of attempts) await expect(attempt.execute()).rejects.toThrow(SqlGuardError);
  });

  it('checks identifiers, values and placeholders', () => {
    expect(() => db.table('orders; DROP TABLE orders')).toThrow(/identifier/);
    expect(() => db.table('orders').select('amount) FROM customers --')).toThrow(/identifier/);
    expect(() => db.table('orders').orderBy('amount; --')).toThrow(/identifier/);
    expect(() => db.table('orders').where('day', 'eq', Number.NaN)).toThrow(TypeError);
    expect(() => db.table('orders').where('day', 'in', 'emea' as never)).toThrow(TypeError);
    expect(() => db.table('orders').where('day', 'like' as never, 'x')).toThrow(TypeError);
    expect(() => raw('amount > ?')).toThrow(/placeholder/);
    expect(() => raw("amount > 0 AND region <> '?'", [])).not.toThrow();
  });

  it('validates metric bounds', async () => {
    await expect(metrics.topProducts(db, { ...RANGE, limit: 101 })).rejects.toThrow(RangeError);
    await expect(metrics.ordersExport(db, { ...RANGE, maxRows: 0 })).rejects.toThrow(RangeError);
    await expect(metrics.activeCustomers(db, { ...RANGE, granularity: 'year' as never })).rejects.toThrow(RangeError);
  });
});
