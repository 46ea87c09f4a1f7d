/**
 * The demo's `orders` dataset on every engine: the same dataset queries, compiled for each dialect
 * and run by the demo's drivers (DuckDB, Postgres, chDB, and `@clickhouse/client` against chDB's
 * HTTP front), answer the same rows for every tenant, and the same as the hand-written endpoints
 * revenueByRegion and revenueByDay.
 */
import * as Effect from "effect/Effect"
import type { DatasetQuery, SqlExecutor } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnalyticsCaller, createAnalyticsApi } from "../../examples/analytics/api.js"
import { TENANT_IDS } from "../../examples/analytics/dataset.js"
import { duckDbDriver } from "../../examples/analytics/duckdb.js"
import { ordersDataset } from "../../examples/analytics/ordersDataset.js"
import { createDb } from "../../examples/analytics/sql.js"
import { queryDataset } from "../../src/datasets/run.js"
import { callApi } from "../demo/support/http.js"
import { METRIC_CASES, RANGE } from "../demo/support/references.js"
import { findChdbForTests } from "../support/chdb.js"
import { findPostgresBinForTests } from "../support/postgresServer.js"
import { type EngineName, type Engines, openEngines } from "./support/engines.js"

const ROWS = 10_000
const ENGINES: ReadonlyArray<EngineName> = ["duckdb", "postgres", "chdb", "clickhouse"]

const postgresBin = findPostgresBinForTests("the orders dataset on every engine")
const chdb = findChdbForTests("the orders dataset on every engine")

type OrdersQuery = DatasetQuery<typeof ordersDataset>
type Row = Readonly<Record<string, unknown>>

const IN_RANGE = { field: "day", op: "between", value: [RANGE.from, RANGE.to] } as const

const QUERIES: Readonly<Record<string, OrdersQuery>> = {
  "revenue by region": {
    dimensions: ["region"],
    measures: ["revenue", "orders", "customers", "avgOrder"],
    filters: [IN_RANGE],
    orderBy: [{ field: "revenue", direction: "desc" }, { field: "region" }]
  },
  "revenue by day in one region": {
    dimensions: ["day"],
    measures: ["orders", "revenue"],
    filters: [IN_RANGE, { field: "region", op: "eq", value: "emea" }],
    limit: 10_000
  },
  "every measure by month and product, but some products, outside one region": {
    dimensions: ["day.month", "product_id"],
    measures: ["revenue", "orders", "customers", "avgOrder"],
    filters: [{ field: "product_id", op: "notIn", value: [1, 2, 3, 5, 8] }, { field: "region", op: "neq", value: "apac" }],
    limit: 10_000
  },
  "groups over a revenue, by week": {
    dimensions: ["day.week"],
    measures: ["revenue", "customers"],
    filters: [
      { field: "revenue", op: "gt", value: 1000 },
      { field: "day", op: "gte", value: "2025-03-01" },
      { field: "region", op: "in", value: ["na", "emea"] }
    ],
    orderBy: [{ field: "customers", direction: "desc" }, { field: "day.week" }],
    limit: 10_000
  }
}

/** One tenant's answer to `query` on `executor`, as queryserve answers a request's query body. */
const ask = async (executor: SqlExecutor, tenantId: string, query: OrdersQuery): Promise<ReadonlyArray<Row>> =>
  (await Effect.runPromise(queryDataset(ordersDataset, query, { executor, tenantId, auth: null }))).data

/** avg over decimals is a double: engines may differ in its last digits. */
const expectSameRows = (answer: ReadonlyArray<Row>, expected: ReadonlyArray<Row>, label: string): void => {
  expect(answer.map(({ avgOrder: _, ...exact }) => exact), label).toEqual(expected.map(({ avgOrder: _, ...exact }) => exact))
  answer.forEach((row, i) => {
    if (row.avgOrder !== undefined) expect(row.avgOrder as number, label).toBeCloseTo(expected[i]!.avgOrder as number, 9)
  })
}

const pick = (rows: ReadonlyArray<Row>, keys: ReadonlyArray<string>): ReadonlyArray<Row> =>
  rows.map((row) => Object.fromEntries(keys.map((key) => [key, row[key]])))

describe.skipIf(postgresBin === undefined || chdb === undefined)("the orders dataset on every engine", () => {
  let engines: Engines
  let endpoints: { readonly baseUrl: string; stop(): Promise<void> }
  const keyOf = (tenant: string): string => `orders-${tenant}-key`

  beforeAll(async () => {
    engines = await openEngines(ROWS, postgresBin!)
    const keys = Object.fromEntries(
      TENANT_IDS.map((tenant): [string, AnalyticsCaller] => [keyOf(tenant), { name: tenant, tenantId: tenant, roles: ["analyst"] }])
    )
    const connection = await engines.reference.instance.connect()
    const api = createAnalyticsApi(createDb(duckDbDriver(connection)), { keys, queryLogging: false, endpoints: ["revenueByRegion", "revenueByDay"] })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    endpoints = {
      baseUrl: `${server.url}${api.basePath}`,
      stop: async () => {
        await server.stop()
        await api.dispose()
        connection.closeSync()
      }
    }
  }, 120_000)

  afterAll(async () => {
    await endpoints?.stop()
    await engines?.close()
  })

  for (const [name, query] of Object.entries(QUERIES)) {
    it(`${name}: the same answer on every engine, for every tenant`, async () => {
      for (const tenant of TENANT_IDS) {
        const [duckdb, ...others] = await Promise.all(ENGINES.map((engine) => ask(engines.executors[engine], tenant, query)))
        expect(duckdb!.length, `${tenant} has rows`).toBeGreaterThan(0)
        others.forEach((answer, i) => expectSameRows(answer, duckdb!, `${ENGINES[i + 1]} for ${tenant}`))
      }
    })
  }

  const endpointCases = [
    { endpoint: "revenueByRegion", query: QUERIES["revenue by region"]!, keys: ["region", "orders", "customers", "revenue"] },
    { endpoint: "revenueByDay", query: QUERIES["revenue by day in one region"]!, keys: ["day", "orders", "revenue"] }
  ] as const

  for (const { endpoint, query, keys } of endpointCases) {
    it(`answers as the hand-written ${endpoint} endpoint, on every engine, for every tenant`, async () => {
      for (const tenant of TENANT_IDS) {
        const answer = await callApi(endpoints.baseUrl, endpoint, { key: keyOf(tenant), input: METRIC_CASES[endpoint]!.input })
        expect(answer.status, answer.text).toBe(200)
        const rows = answer.json as ReadonlyArray<Row>
        expect(rows.length, `${tenant} has rows`).toBeGreaterThan(0)
        for (const engine of ENGINES) {
          expect(pick(await ask(engines.executors[engine], tenant, query), keys), `${engine} for ${tenant}`).toEqual(rows)
        }
      }
    })
  }
})
