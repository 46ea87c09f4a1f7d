import { dataset, dimension, Forbidden, measure, type SqlDialect, ValidationError } from "queryserve"
import { describe, expect, it } from "vitest"
import { Orders } from "./ordersModel.js"

const question = {
  dimensions: ["region", "day.month"],
  measures: ["revenue", "revenuePerCustomer"],
  filters: [
    { field: "product", op: "contains", value: "50%_off" },
    { field: "quantity", op: "in", value: [1, 2.5] },
    { field: "revenue", op: "gt", value: 100 },
    { field: "category", op: "isNull", value: false },
    { field: "day", op: "between", value: ["2025-01-01", "2025-03-31T23:59:59"] }
  ],
  orderBy: [{ field: "revenue", direction: "desc" }],
  limit: 10
} as const

const PARAMS = ["acme", "50%_off", 1, 2.5, "2025-01-01 00:00:00", "2025-03-31 23:59:59", 100]

describe("compiled statements", () => {
  it("DuckDB: $n placeholders, date_trunc, strpos, times cast from text", () => {
    expect(Orders.toSql(question, { dialect: "duckdb", tenantId: "acme" })).toEqual({
      sql: [
        `SELECT "source"."region" AS "region", CAST(date_trunc('month', "source"."day") AS DATE) AS "day.month", sum("source"."amount") AS "revenue", CAST(sum("source"."amount") AS DOUBLE) / NULLIF(count(DISTINCT "source"."customer_id"), 0) AS "revenuePerCustomer"`,
        `FROM "order_facts" AS "source"`,
        `WHERE "source"."tenant_id" = $1 AND (strpos("source"."product_name", $2) > 0 AND "source"."quantity" IN ($3, $4) AND "source"."category" IS NOT NULL AND "source"."day" BETWEEN CAST($5 AS TIMESTAMP) AND CAST($6 AS TIMESTAMP))`,
        `GROUP BY "source"."region", CAST(date_trunc('month', "source"."day") AS DATE)`,
        `HAVING sum("source"."amount") > $7`,
        `ORDER BY sum("source"."amount") DESC NULLS LAST, "source"."region" ASC NULLS LAST, CAST(date_trunc('month', "source"."day") AS DATE) ASC NULLS LAST`,
        `LIMIT 11 OFFSET 0`
      ].join("\n"),
      params: PARAMS
    })
  })

  it("Postgres: numbers, booleans and times cast, text typed by its column", () => {
    const { sql, params } = Orders.toSql(question, { dialect: "postgres", tenantId: "acme" })
    expect(sql.split("\n")).toEqual([
      `SELECT "source"."region" AS "region", CAST(date_trunc('month', "source"."day") AS DATE) AS "day.month", sum("source"."amount") AS "revenue", CAST(sum("source"."amount") AS DOUBLE PRECISION) / NULLIF(count(DISTINCT "source"."customer_id"), 0) AS "revenuePerCustomer"`,
      `FROM "order_facts" AS "source"`,
      `WHERE "source"."tenant_id" = $1 AND (strpos("source"."product_name", $2) > 0 AND "source"."quantity" IN (CAST($3 AS NUMERIC), CAST($4 AS NUMERIC)) AND "source"."category" IS NOT NULL AND "source"."day" BETWEEN CAST($5 AS TIMESTAMP) AND CAST($6 AS TIMESTAMP))`,
      `GROUP BY "source"."region", CAST(date_trunc('month', "source"."day") AS DATE)`,
      `HAVING sum("source"."amount") > CAST($7 AS NUMERIC)`,
      `ORDER BY sum("source"."amount") DESC NULLS LAST, "source"."region" ASC NULLS LAST, CAST(date_trunc('month', "source"."day") AS DATE) ASC NULLS LAST`,
      `LIMIT 11 OFFSET 0`
    ])
    expect(params).toEqual(PARAMS)
  })

  it("ClickHouse: typed {pN:Type} placeholders in a record, toStartOf… grains, position", () => {
    const { sql, params } = Orders.toSql(question, { dialect: "clickhouse", tenantId: "acme" })
    expect(sql.split("\n")).toEqual([
      `SELECT "source"."region" AS "region", toStartOfMonth("source"."day") AS "day.month", sum("source"."amount") AS "revenue", toFloat64(sum("source"."amount")) / NULLIF(count(DISTINCT "source"."customer_id"), 0) AS "revenuePerCustomer"`,
      `FROM "order_facts" AS "source"`,
      `WHERE "source"."tenant_id" = {p1:String} AND (position("source"."product_name", {p2:String}) > 0 AND "source"."quantity" IN ({p3:Int64}, {p4:Float64}) AND "source"."category" IS NOT NULL AND "source"."day" BETWEEN {p5:DateTime64(6)} AND {p6:DateTime64(6)})`,
      `GROUP BY "source"."region", toStartOfMonth("source"."day")`,
      `HAVING sum("source"."amount") > {p7:Int64}`,
      `ORDER BY sum("source"."amount") DESC NULLS LAST, "source"."region" ASC NULLS LAST, toStartOfMonth("source"."day") ASC NULLS LAST`,
      `LIMIT 11 OFFSET 0`
    ])
    expect(params).toEqual(Object.fromEntries(PARAMS.map((value, i) => [`p${i + 1}`, value])))
  })

  const grains = (dialect: SqlDialect): string => {
    const { sql } = Orders.toSql({ dimensions: ["day", "day.day", "day.week", "day.month", "day.quarter", "day.year"] }, { dialect, tenantId: "t" })
    return sql.split("\n")[0]!
  }

  it("cuts time to each grain's start as a DATE; bare is by day; weeks start on Monday", () => {
    const trunc = (grain: string, alias: string) => `CAST(date_trunc('${grain}', "source"."day") AS DATE) AS "${alias}"`
    const duckdbAndPostgres = [
      `CAST("source"."day" AS DATE) AS "day"`,
      `CAST("source"."day" AS DATE) AS "day.day"`,
      trunc("week", "day.week"),
      trunc("month", "day.month"),
      trunc("quarter", "day.quarter"),
      trunc("year", "day.year")
    ]
    expect(grains("duckdb")).toBe(`SELECT ${duckdbAndPostgres.join(", ")}`)
    expect(grains("postgres")).toBe(`SELECT ${duckdbAndPostgres.join(", ")}`)
    expect(grains("clickhouse")).toBe(`SELECT ${[
      `toDate("source"."day") AS "day"`,
      `toDate("source"."day") AS "day.day"`,
      `toStartOfWeek("source"."day", 1) AS "day.week"`,
      `toStartOfMonth("source"."day") AS "day.month"`,
      `toStartOfQuarter("source"."day") AS "day.quarter"`,
      `toStartOfYear("source"."day") AS "day.year"`
    ].join(", ")}`)
  })

  it("filters a time dimension at its grain when one is named", () => {
    const { sql } = Orders.toSql({ measures: ["orders"], filters: [{ field: "day.month", op: "eq", value: "2025-03-01" }] }, { dialect: "duckdb", tenantId: "t" })
    expect(sql).toContain(`WHERE "source"."tenant_id" = $1 AND (CAST(date_trunc('month', "source"."day") AS DATE) = CAST($2 AS TIMESTAMP))`)
  })

  it("writes measures alone without GROUP BY or ORDER BY, and no WHERE for an untenanted dataset", () => {
    const plain = dataset("plain", { source: "analytics.orders", dimensions: {}, measures: { orders: measure.count(), sold: measure.count("quantity") } })
    expect(plain.toSql({ measures: ["orders", "sold"] }, { dialect: "postgres", tenantId: "ignored" })).toEqual({
      sql: `SELECT count(*) AS "orders", count("source"."quantity") AS "sold"\nFROM "analytics"."orders" AS "source"\nLIMIT 101 OFFSET 0`,
      params: []
    })
  })

  it("ANDs the tenant condition alone when there are no dimension filters, and before every HAVING", () => {
    const { sql, params } = Orders.toSql(
      { dimensions: ["region"], measures: ["orders"], filters: [{ field: "orders", op: "gte", value: 3 }] },
      { dialect: "duckdb", tenantId: "globex" }
    )
    expect(sql).toContain(`WHERE "source"."tenant_id" = $1\nGROUP BY "source"."region"\nHAVING count(*) >= $2`)
    expect(params).toEqual(["globex", 3])
  })

  it("writes list, range and null tests for each op", () => {
    const where = (filter: object) =>
      Orders.toSql({ measures: ["orders"], filters: [filter] } as never, { dialect: "duckdb", tenantId: "t" }).sql.split("\n")[2]
    expect(where({ field: "region", op: "notIn", value: ["na", "emea"] })).toBe(`WHERE "source"."tenant_id" = $1 AND ("source"."region" NOT IN ($2, $3))`)
    expect(where({ field: "region", op: "neq", value: "na" })).toBe(`WHERE "source"."tenant_id" = $1 AND ("source"."region" <> $2)`)
    expect(where({ field: "multi", op: "eq", value: true })).toBe(`WHERE "source"."tenant_id" = $1 AND ("source"."multi" = $2)`)
    expect(where({ field: "quantity", op: "lt", value: 2 })).toBe(`WHERE "source"."tenant_id" = $1 AND ("source"."quantity" < $2)`)
    expect(where({ field: "category", op: "isNull", value: true })).toBe(`WHERE "source"."tenant_id" = $1 AND ("source"."category" IS NULL)`)
  })

  it("never writes a value into the SQL text", () => {
    const hostile = `x' OR '1'='1"; DROP TABLE orders; --`
    for (const dialect of ["duckdb", "postgres", "clickhouse"] as const) {
      for (const op of ["eq", "neq", "contains"] as const) {
        const { sql, params } = Orders.toSql({ measures: ["orders"], filters: [{ field: "region", op, value: hostile }] }, { dialect, tenantId: hostile })
        expect(sql).not.toContain("DROP")
        expect(Object.values(params)).toEqual([hostile, hostile])
      }
    }
  })

  it("refuses a bad query with its ValidationError and a caller without a tenant with Forbidden", () => {
    expect(() => Orders.toSql({} as never, { dialect: "duckdb", tenantId: "t" })).toThrow(ValidationError)
    expect(() => Orders.toSql({ measures: ["orders"] }, { dialect: "duckdb", tenantId: null })).toThrow(Forbidden)
    expect(() => Orders.toSql({ measures: ["orders"] }, { dialect: "duckdb", tenantId: "" })).toThrow(Forbidden)
  })

  it("answers over every tenant only when allowUnscoped returns exactly true", () => {
    const config = { source: "orders", tenantKey: "tenant_id", dimensions: { region: dimension.string() }, measures: {} }
    const admin = { roles: ["admin"] }
    const open = dataset("open", { ...config, allowUnscoped: (auth) => auth?.roles?.includes("admin") === true })
    expect(open.toSql({ dimensions: ["region"] }, { dialect: "duckdb", auth: admin }).sql).not.toContain("WHERE")
    expect(() => open.toSql({ dimensions: ["region"] }, { dialect: "duckdb", auth: { roles: ["analyst"] } })).toThrow(Forbidden)
    const truthy = dataset("truthy", { ...config, allowUnscoped: () => 1 as unknown as boolean })
    expect(() => truthy.toSql({ dimensions: ["region"] }, { dialect: "duckdb", auth: admin })).toThrow(Forbidden)
  })
})
