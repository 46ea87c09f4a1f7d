/**
 * The ClickHouse driver on chDB, the ClickHouse engine in this process: the builder's SQL, values
 * bound as typed `{name:Type}` parameters, and `?` placeholders found around ClickHouse's quotes
 * and comments, each run on the engine and checked by what it answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb, type Db, raw, type SqlValue } from "../../examples/analytics/sql.js"
import { type EmbeddedClickHouse, openChdb } from "../../examples/clickhouse/chdb.js"
import { clickHouseDriver } from "../../examples/clickhouse/clickhouse.js"
import { expectOnlyScopedReads, readsThroughEveryKeySpelling, tenantsReadWithRawOr } from "../demo/support/scopeEscapes.js"
import { findChdbForTests } from "../support/chdb.js"

const available = findChdbForTests("ClickHouse driver on chDB") !== undefined

describe.skipIf(!available)("the ClickHouse driver on chDB", () => {
  let clickhouse: EmbeddedClickHouse
  let db: Db
  /** The SQL each statement reached the engine with. */
  const sent: Array<string> = []

  beforeAll(async () => {
    clickhouse = await openChdb()
    const { executor } = clickhouse
    db = createDb(clickHouseDriver({ ...executor, query: (sql, params) => (sent.push(sql), executor.query(sql, params)) }))
    await executor.query(
      `CREATE TABLE orders (tenant_id String, region String, day Date, quantity Int32, amount Decimal(12, 2))
       ENGINE = MergeTree ORDER BY (tenant_id, day)`,
      {}
    )
    await executor.query(
      `INSERT INTO orders VALUES
         ('acme', 'emea', '2025-01-01', 1, 10.50), ('acme', 'emea', '2025-01-02', 2, 20.25),
         ('acme', 'na', '2025-01-03', 3, 30.00), ('globex', 'emea', '2025-01-01', 4, 99.99),
         ('globex', 'apac', '2025-02-01', 5, 5.01)`,
      {}
    )
  })

  afterAll(() => clickhouse?.executor.close())

  const lastSent = (): string => sent[sent.length - 1]!

  describe("the builder", () => {
    it("filters, groups, orders and limits with every value a typed parameter", async () => {
      const rows = await db
        .table("orders")
        .where("tenant_id", "eq", "acme")
        .where("day", "gte", "2025-01-01")
        .where("quantity", "in", [1, 2, 3])
        .select("region", raw("count(*) AS orders"), raw("sum(amount) AS revenue"))
        .groupBy("region")
        .orderBy("revenue", "desc")
        .limit(5)
        .execute()
      expect(rows).toEqual([{ region: "emea", orders: 2, revenue: 30.75 }, { region: "na", orders: 1, revenue: 30 }])
      expect(lastSent()).toBe(
        `SELECT "region", count(*) AS orders, sum(amount) AS revenue FROM "orders" WHERE "tenant_id" = {p0:String} ` +
          `AND "day" >= {p1:String} AND "quantity" IN ({p2:Int64}, {p3:Int64}, {p4:Int64}) GROUP BY "region" ` +
          `ORDER BY "revenue" DESC LIMIT {p5:Int64}`
      )
    })

    it("matches nothing with an empty IN list", async () => {
      expect(await db.table("orders").where("region", "in", []).select(raw("count(*) AS n")).execute()).toEqual([{ n: 0 }])
    })

    it("reads a db.with() source named like its table instead of the table: the tenant filter holds", async () => {
      const rows = await db
        .with({ orders: db.table("orders").where("tenant_id", "eq", "globex") }, "SELECT count(*) AS n, sum(amount) AS revenue FROM orders")
        .execute()
      expect(rows).toEqual([{ n: 2, revenue: 105 }])
    })

    it("reads a db.with() key's CTE however the body spells it, or refuses the key: ClickHouse compares names case-sensitively", async () => {
      expectOnlyScopedReads(await readsThroughEveryKeySpelling(db, "globex"), 2)
    })

    it("keeps a raw() condition with OR inside the tenant condition", async () => {
      for (const tenant of ["acme", "globex"]) expect(await tenantsReadWithRawOr(db, tenant)).toEqual([tenant])
      expect(lastSent()).toContain(`WHERE "tenant_id" = {p0:String} AND (region = 'emea' OR amount >= {p1:Int64})`)
    })
  })

  describe("parameters", () => {
    const echo = async (value: SqlValue) =>
      (await db.with({}, raw("SELECT ? AS value", [value])).execute())[0]?.value

    it("hand every value to the engine as it is, typed by its JavaScript type", async () => {
      const values: Array<SqlValue> = [
        "acme' OR '1'='1",
        "acme\\' OR 1=1 --",
        "back\\slash, tab\t, newline\n, quote ', double \" and `backquote`",
        "{p0:String} ? $$ -- /* # ",
        "Zürich 東京 🦆",
        "",
        0,
        -42,
        Number.MAX_SAFE_INTEGER,
        0.1,
        -2.5e-7,
        true,
        false
      ]
      for (const value of values) expect(await echo(value), JSON.stringify(value)).toEqual(value)
      expect(lastSent()).toBe("SELECT {p0:Bool} AS value")
    })

    it("make hostile text match nothing and change nothing", async () => {
      for (const attack of ["acme' OR '1'='1", "acme\\' OR 1=1 --", "x'; DROP TABLE orders; --"]) {
        expect(await db.table("orders").where("tenant_id", "eq", attack).execute()).toEqual([])
      }
      expect(await db.table("orders").select(raw("count(*) AS n")).execute()).toEqual([{ n: 5 }])
    })
  })

  describe("placeholders in ClickHouse SQL", () => {
    // Each statement has one real placeholder, bound to 7, and question marks that are text.
    const CASES: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
      ["a backslash-escaped quote", String.raw`SELECT 'it\'s ?' AS text, ? AS p`, { text: "it's ?", p: 7 }],
      ["a string ending in a backslash", String.raw`SELECT 'a\\' AS text, ? AS p, '?' AS q`, { text: "a\\", p: 7, q: "?" }],
      ["a doubled quote", "SELECT 'it''s ?' AS text, ? AS p", { text: "it's ?", p: 7 }],
      ["a -- comment", "SELECT ? AS p -- is this ? a placeholder\n, 1 AS one", { p: 7, one: 1 }],
      ["a # comment", "SELECT ? AS p # what ?\n, 1 AS one", { p: 7, one: 1 }],
      ["a #! comment", "SELECT ? AS p #!what ?\n, 1 AS one", { p: 7, one: 1 }],
      ["nested block comments", "SELECT /* ? /* ? */ ? */ ? AS p", { p: 7 }],
      ["a backquoted identifier", "SELECT 1 AS `odd?name`, ? AS p, 2 AS `a\\`?`", { "odd?name": 1, p: 7, "a`?": 2 }],
      ["a double-quoted identifier", 'SELECT 1 AS "odd?name", ? AS p, 2 AS "b\\"?"', { "odd?name": 1, p: 7, 'b"?': 2 }],
      ["a heredoc", "SELECT $$it's ?$$ AS text, $tag$ ? $$ ? $tag$ AS tagged, ? AS p", { text: "it's ?", tagged: " ? $$ ? ", p: 7 }],
      ["a $ inside a name", "SELECT 1 AS a$b, ? AS p, 2 AS c$", { a$b: 1, p: 7, c$: 2 }]
    ]

    for (const [name, sql, expected] of CASES) {
      it(`are not inside ${name}`, async () => {
        expect(await db.with({}, raw(sql, [7])).execute()).toEqual([expected])
        expect(lastSent()).toBe(sql.replace(/\? AS p\b/, "{p0:Int64} AS p"))
      })
    }

    it("count against the values, in ClickHouse's reading of the text", async () => {
      // Standard SQL reads 'a\' as a whole string and then a placeholder; ClickHouse reads an open string.
      await expect(db.with({}, raw(String.raw`SELECT 'a\' AS text, ? AS p`, [7])).execute()).rejects.toThrow(
        /0 placeholder\(s\) but 1 param\(s\) in clickhouse SQL/
      )
      await expect(db.with({}, raw("SELECT '?' AS q", [7])).execute()).rejects.toThrow(/placeholder/)
    })

    it("refuse a fragment that ends inside a comment: it would swallow the SQL after it", async () => {
      const swallowing = db.table("orders").select(raw("count(*) AS n # all of them")).where("tenant_id", "eq", "acme")
      await expect(swallowing.execute()).rejects.toThrow(/ends inside quotes or a comment/)
      const closed = db.table("orders").select(raw("count(*) AS n /* all of them */")).where("tenant_id", "eq", "acme")
      expect(await closed.execute()).toEqual([{ n: 3 }])
    })

    it("refuse a fragment whose parentheses do not balance, counted outside ClickHouse's quotes and comments", async () => {
      const acme = db.table("orders").where("tenant_id", "eq", "acme")
      await expect(acme.where(raw("1) OR (1"), "eq", 1).execute()).rejects.toThrow(/parentheses that do not balance in clickhouse SQL/)
      const counted = acme.where(raw(String.raw`length('\')(') # (` + "\n"), "gt", 0).select(raw("count(*) AS `n)`"))
      expect(await counted.execute()).toEqual([{ "n)": 3 }])
    })
  })
})
