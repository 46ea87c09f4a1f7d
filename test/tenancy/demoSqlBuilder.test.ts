/**
 * Regression: auto-inject over the demo's SQL builder, through the runtime. A raw() condition with
 * a top-level OR was written unparenthesized after the injected tenant condition, so the OR read
 * every tenant's rows; and a db.with() key with capital letters became a quoted CTE name that
 * Postgres and ClickHouse do not match to the body's `orders`, so the body read the whole table
 * there (DuckDB, case-insensitive, hid it). Now raw() conditions are parenthesized and such keys
 * are refused where they are defined. And a db.with() body joining a base table with `JOIN ... USING`
 * read it: DuckDB's getTableNames() lists no table for such a join, so the guard approved it. The
 * guard now walks DuckDB's parse tree and refuses what it cannot prove reads only the keys.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { apiKeyAuth, defineServe, type ServeRequest } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { duckDbDriver } from "../../examples/analytics/duckdb.js"
import { createDb, type Db, raw, SqlGuardError } from "../../examples/analytics/sql.js"

type Ctx = { readonly db: Db }

let connection: DuckDBConnection

beforeAll(async () => {
  connection = await (await DuckDBInstance.create(":memory:")).connect()
  await connection.run(`CREATE TABLE orders (id INTEGER, tenant_id VARCHAR, discount INTEGER, amount INTEGER);
    INSERT INTO orders VALUES (1, 'acme', 0, 10), (2, 'acme', 5, 20), (3, 'globex', 0, 5000), (4, 'globex', 7, 1);
    CREATE TABLE notes (id INTEGER, tenant_id VARCHAR, note VARCHAR);
    INSERT INTO notes VALUES (1, 'globex', 'globex only'), (2, 'globex', 'globex only')`)
})

afterAll(() => connection?.closeSync())

const apiOver = (errors: Array<unknown>) =>
  defineServe({
    auth: apiKeyAuth({ keys: { "key-acme": { tenantId: "acme" } } }),
    tenant: { extract: (auth) => auth?.tenantId, mode: "auto-inject" },
    context: { db: createDb(duckDbDriver(connection)) },
    hooks: { onError: ({ error }) => void errors.push(error) },
    queries: {
      // "Discounted or big orders": the OR must stay inside the tenant's rows.
      notable: ({ ctx }: { ctx: Ctx }) =>
        ctx.db.table("orders").where(raw("discount > 0 OR amount"), "gte", 1000).select("id").orderBy("id").execute(),
      mixedCaseKey: ({ ctx }: { ctx: Ctx }) =>
        ctx.db.with({ Orders: ctx.db.table("orders").select("tenant_id") }, "SELECT count(*) AS n FROM orders").execute(),
      // `notes` is no db.with() key: the base table, every tenant's rows.
      joinUsing: ({ ctx }: { ctx: Ctx }) =>
        ctx.db.with({ orders: ctx.db.table("orders") }, "SELECT n.note FROM orders JOIN notes n USING (id)").execute(),
      joinOn: ({ ctx }: { ctx: Ctx }) =>
        ctx.db.with({ orders: ctx.db.table("orders") }, "SELECT n.note FROM orders JOIN notes n ON orders.id = n.id").execute()
    }
  })

const call = async (endpoint: string) => {
  const errors: Array<unknown> = []
  const request: ServeRequest = { method: "GET", path: `/api/analytics/${endpoint}`, headers: { "x-api-key": "key-acme" } }
  const response = await apiOver(errors).handler(request)
  return { status: response.status, body: JSON.parse(response.body ?? "null") as unknown, errors }
}

describe("auto-inject over the demo's SQL builder", () => {
  it("a raw() condition with OR reads only the caller's rows", async () => {
    expect(await call("notable")).toEqual({ status: 200, body: [{ id: 2 }], errors: [] })
  })

  it("a db.with() key with capital letters is refused before any SQL runs", async () => {
    const { status, errors } = await call("mixedCaseKey")
    expect(status).toBe(500)
    expect(String(errors[0])).toMatch(/db\.with\(\) key "Orders" must be a lower-case name/)
  })

  it("a db.with() body joining a base table is refused, with USING as with ON", async () => {
    for (const endpoint of ["joinUsing", "joinOn"]) {
      const { status, body, errors } = await call(endpoint)
      // `body` on both sides: a failure prints the rows that leaked.
      expect({ endpoint, status, body, error: errors[0] }).toEqual({ endpoint, status: 500, body, error: expect.any(SqlGuardError) })
    }
  })
})
