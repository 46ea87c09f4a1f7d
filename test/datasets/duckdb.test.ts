import * as Effect from "effect/Effect"
import { ValidationError } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TENANT_IDS } from "../../examples/analytics/dataset.js"
import { checkDatasetQuery } from "../../src/datasets/decode.js"
import { queryDataset, runDatasetQuery } from "../../src/datasets/run.js"
import { type DemoDatabase, openDemoDatabase, recording } from "./demoDatabase.js"
import { Orders } from "./ordersModel.js"

let db: DemoDatabase
beforeAll(async () => {
  db = await openDemoDatabase()
})
afterAll(() => db?.close())

const ask = (tenantId: string, body: unknown) =>
  Effect.runPromise(queryDataset(Orders, body, { executor: db.executor, tenantId, auth: null }))

describe.each(TENANT_IDS)("the orders dataset on DuckDB, tenant %s", (tenant) => {
  it("answers every measure by region as hand-written SQL does", async () => {
    const answer = await ask(tenant, {
      dimensions: ["region"],
      measures: ["revenue", "orders", "customers", "avgOrder", "minOrder", "maxOrder", "revenuePerCustomer"]
    })
    const expected = await db.sql(
      `SELECT region, sum(amount) AS revenue, count(*) AS orders, count(DISTINCT customer_id) AS customers,
              avg(amount) AS avgOrder, min(amount) AS minOrder, max(amount) AS maxOrder,
              CAST(sum(amount) AS DOUBLE) / count(DISTINCT customer_id) AS revenuePerCustomer
       FROM order_facts WHERE tenant_id = ? GROUP BY region ORDER BY region`,
      tenant
    )
    expect(answer.data.length).toBeGreaterThan(0)
    expect(answer.data).toEqual(expected)
    expect(answer.page).toEqual({ limit: 100, nextCursor: null, hasMore: false })
  })

  it("answers by month and category with filters on dimensions and measures, largest first", async () => {
    const answer = await ask(tenant, {
      dimensions: ["day.month", "category"],
      measures: ["revenue", "orders"],
      filters: [
        { field: "day", op: "between", value: ["2025-02-01", "2025-06-30"] },
        { field: "region", op: "in", value: ["na", "emea"] },
        { field: "multi", op: "eq", value: false },
        { field: "orders", op: "gte", value: 5 }
      ],
      orderBy: [{ field: "revenue", direction: "desc" }],
      limit: 10_000
    })
    const expected = await db.sql(
      `SELECT strftime(date_trunc('month', day), '%Y-%m-%d') AS "day.month", category, sum(amount) AS revenue, count(*) AS orders
       FROM order_facts
       WHERE tenant_id = ? AND day BETWEEN DATE '2025-02-01' AND DATE '2025-06-30' AND region IN ('na', 'emea') AND NOT (quantity > 1)
       GROUP BY 1, 2 HAVING count(*) >= 5
       ORDER BY revenue DESC, 1, category NULLS LAST`,
      tenant
    )
    expect(answer.data.length).toBeGreaterThan(10)
    expect(answer.data).toEqual(expected)
  })

  it("starts weeks on Monday and gives each grain's start as YYYY-MM-DD", async () => {
    const answer = await ask(tenant, { dimensions: ["day.week", "day.quarter", "day.year", "day"], measures: ["orders"], limit: 10_000 })
    for (const row of answer.data) {
      expect(new Date(`${row["day.week"]}T00:00:00Z`).getUTCDay()).toBe(1)
      expect(row["day.quarter"]).toMatch(/^\d{4}-(01|04|07|10)-01$/)
      expect(row["day.year"]).toMatch(/^\d{4}-01-01$/)
      expect(row.day).toMatch(/^\d{4}-\d\d-\d\d$/)
      expect(Number.isInteger(row.orders)).toBe(true)
    }
  })

  it("groups nulls last and filters them with isNull", async () => {
    const all = await ask(tenant, { dimensions: ["category"], measures: ["orders"] })
    expect(all.data.at(-1)?.category).toBeNull()
    const nulls = await ask(tenant, { measures: ["orders"], filters: [{ field: "category", op: "isNull", value: true }] })
    expect(nulls.data).toEqual([{ orders: all.data.at(-1)?.orders }])
  })

  it("walks every group exactly once across pages, whatever the page size", async () => {
    const query = { dimensions: ["day", "region", "category"], measures: ["revenue"] }
    const whole = await ask(tenant, { ...query, limit: 10_000 })
    const groups = await db.sql(`SELECT count(*) AS n FROM (SELECT DISTINCT day, region, category FROM order_facts WHERE tenant_id = ?)`, tenant)
    expect(whole.data.length).toBe(groups[0]!.n)
    const walked: Array<unknown> = []
    let cursor: string | null | undefined
    let pages = 0
    do {
      // The limit may change between pages: the cursor binds everything else.
      const page = await ask(tenant, { ...query, limit: pages % 2 === 0 ? 97 : 250, ...(cursor ? { cursor } : {}) })
      walked.push(...page.data)
      expect(page.page.hasMore).toBe(page.page.nextCursor !== null)
      cursor = page.page.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBeGreaterThan(3)
    expect(walked).toEqual(whole.data)
  })
})

describe("cursors on DuckDB", () => {
  const query = { dimensions: ["day", "region"], measures: ["orders"], limit: 20 }

  it("refuses a cursor altered, or used with other inputs, before running anything", async () => {
    const first = await ask("acme", query)
    const cursor = first.page.nextCursor!
    const executor = recording(db.executor)
    const refusals = [
      { ...query, cursor: cursor.replace(/^./, (c) => (c === "a" ? "b" : "a")) },
      { ...query, cursor: `${cursor.slice(0, -1)}${cursor.endsWith("A") ? "B" : "A"}` },
      { ...query, cursor, filters: [{ field: "region", op: "eq", value: "na" }] },
      { ...query, cursor, measures: ["revenue"] },
      { ...query, cursor, orderBy: [{ field: "orders", direction: "desc" }] }
    ]
    for (const body of refusals) {
      const answer = await Effect.runPromise(Effect.flip(queryDataset(Orders, body, { executor, tenantId: "acme", auth: null })))
      expect(answer).toBeInstanceOf(ValidationError)
      expect((answer as ValidationError).issues[0]?.path).toEqual(["cursor"])
    }
    expect(executor.statements).toEqual([])
  })

  it("continues where the last page ended with any limit", async () => {
    const first = await ask("acme", query)
    const next = await ask("acme", { ...query, limit: 5, cursor: first.page.nextCursor })
    const whole = await ask("acme", { ...query, limit: 25 })
    expect(next.data).toEqual(whole.data.slice(20, 25))
  })
})

describe("database failures", () => {
  it("are the usual classified errors, not answers", async () => {
    const checked = checkDatasetQuery(Orders, { measures: ["orders"] })
    if (checked._tag === "Left") throw checked.left
    const failing = { dialect: "duckdb" as const, execute: () => db.executor.execute({ sql: "SELECT * FROM no_such_table", params: [] }) }
    const error = await Effect.runPromise(Effect.flip(runDatasetQuery(Orders, checked.right, { executor: failing, tenantId: "acme", auth: null })))
    expect(error._tag).toBe("InternalError")
  })
})
