/**
 * The same dataset queries compiled for Postgres and ClickHouse (on chDB) answer as on DuckDB, for
 * every tenant: the dialects' SQL runs on the real engines, and the raw values their drivers give
 * (node-postgres' Date objects, NUMERIC and BIGINT as text) come out as DuckDB's.
 */
import * as Effect from "effect/Effect"
import pg from "pg"
import type { SqlExecutor } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { copyDemoDataset } from "../../examples/analytics/copyDataset.js"
import { createDemoDatabase, type DemoDatabase as Demo, TENANT_IDS } from "../../examples/analytics/dataset.js"
import { duckDbSqlExecutor } from "../../examples/analytics/sqlExecutor.js"
import { type EmbeddedClickHouse, openChdb } from "../../examples/clickhouse/chdb.js"
import { postgresTarget } from "../../examples/postgres/postgres.js"
import { queryDataset } from "../../src/datasets/run.js"
import { findChdbForTests } from "../support/chdb.js"
import { findPostgresBinForTests, type PostgresServer, startPostgres } from "../support/postgresServer.js"
import { ORDER_FACTS_VIEW, Orders } from "./ordersModel.js"

const ROWS = 20_000

const QUESTIONS: ReadonlyArray<Readonly<Record<string, unknown>>> = [
  { dimensions: ["region"], measures: ["revenue", "orders", "customers", "avgOrder", "minOrder", "maxOrder", "revenuePerCustomer"] },
  {
    dimensions: ["day.month", "category"],
    measures: ["revenue", "orders"],
    filters: [
      { field: "day", op: "between", value: ["2025-02-01", "2025-06-30T23:59:59"] },
      { field: "region", op: "in", value: ["na", "emea"] },
      { field: "multi", op: "eq", value: false },
      { field: "orders", op: "gte", value: 3 }
    ],
    orderBy: [{ field: "revenue", direction: "desc" }],
    limit: 10_000
  },
  {
    dimensions: ["day.week", "day.quarter", "day.year"],
    measures: ["customers"],
    filters: [
      { field: "quantity", op: "gte", value: 2 },
      { field: "product", op: "contains", value: "Widget" },
      { field: "category", op: "isNull", value: false },
      { field: "region", op: "notIn", value: ["apac"] }
    ],
    limit: 10_000
  },
  { measures: ["revenue", "avgOrder", "revenuePerCustomer"], filters: [{ field: "day.month", op: "eq", value: "2025-03-01" }] },
  { dimensions: ["multi", "quantity"], measures: ["orders", "maxOrder"], filters: [{ field: "maxOrder", op: "between", value: [50, 2000.5] }] },
  { dimensions: ["day"], measures: ["orders"], filters: [{ field: "day", op: "lt", value: "2025-02-01" }], limit: 7 }
]

/** Equal, numbers within 1e-9 of each other: engines may differ in an average's last bits. */
const roughly = (value: unknown): unknown =>
  typeof value === "number" && !Number.isInteger(value)
    ? expect.closeTo(value, Math.max(0, 9 - Math.ceil(Math.log10(Math.abs(value) + 1))))
    : Array.isArray(value)
    ? value.map(roughly)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roughly(v)]))
    : value

const answer = (executor: SqlExecutor, tenantId: string, body: unknown) =>
  Effect.runPromise(queryDataset(Orders, body, { executor, tenantId, auth: null }))

/** Each question's first two pages for every tenant, as `executor` answers them. */
const answers = async (executor: SqlExecutor): Promise<ReadonlyArray<unknown>> => {
  const all: Array<unknown> = []
  for (const tenant of TENANT_IDS) {
    for (const question of QUESTIONS) {
      const first = await answer(executor, tenant, question)
      const next = first.page.nextCursor === null ? null : await answer(executor, tenant, { ...question, cursor: first.page.nextCursor })
      all.push({ tenant, question, first, next })
    }
  }
  return all
}

let demo: Demo
let expected: ReadonlyArray<unknown>
beforeAll(async () => {
  demo = await createDemoDatabase({ rows: ROWS, log: () => undefined })
  await demo.connection.run(ORDER_FACTS_VIEW)
  expected = await answers(duckDbSqlExecutor(demo.connection))
}, 60_000)
afterAll(() => demo?.close())

const chdb = findChdbForTests("datasets on chDB")

describe.skipIf(chdb === undefined)("the ClickHouse dialect on chDB", () => {
  let clickhouse: EmbeddedClickHouse

  beforeAll(async () => {
    clickhouse = await openChdb()
    await copyDemoDataset(demo.connection, clickhouse.target, { log: () => undefined })
    await clickhouse.executor.query(
      `CREATE VIEW order_facts AS
       SELECT o.tenant_id AS tenant_id, o.order_id AS order_id, o.customer_id AS customer_id, o.region AS region,
              o.day AS day, o.quantity AS quantity, o.amount AS amount, p.name AS product_name,
              if(o.order_id % 10 = 0, NULL, p.category) AS category, toBool(o.quantity > 1) AS multi
       FROM orders AS o JOIN products AS p ON o.product_id = p.product_id`,
      {}
    )
  }, 120_000)
  afterAll(() => clickhouse?.executor.close())

  it("answers every question for every tenant as DuckDB does", async () => {
    const executor: SqlExecutor = {
      dialect: "clickhouse",
      execute: (statement, signal) => clickhouse.executor.query(statement.sql, statement.params as Record<string, string | number | boolean>, signal)
    }
    expect(await answers(executor)).toEqual(roughly(expected))
  })
})

const postgresBin = findPostgresBinForTests("datasets on Postgres")

describe.skipIf(postgresBin === undefined)("the Postgres dialect on Postgres", () => {
  let server: PostgresServer
  let pool: pg.Pool

  beforeAll(async () => {
    server = await startPostgres(postgresBin!)
    pool = new pg.Pool({ connectionString: server.url, max: 2 })
    pool.on("error", () => undefined)
    await copyDemoDataset(demo.connection, postgresTarget(pool), { log: () => undefined })
    await pool.query(ORDER_FACTS_VIEW)
  }, 120_000)
  afterAll(async () => {
    await pool?.end()
    await server?.stop()
  })

  it("answers every question for every tenant as DuckDB does, from node-postgres' own values", async () => {
    const executor: SqlExecutor = {
      dialect: "postgres",
      execute: async (statement, signal) => {
        signal?.throwIfAborted()
        return (await pool.query(statement.sql, statement.params as Array<unknown>)).rows as Array<Record<string, unknown>>
      }
    }
    expect(await answers(executor)).toEqual(roughly(expected))
  })
})
