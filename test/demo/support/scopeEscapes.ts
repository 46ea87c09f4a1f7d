/**
 * Two ways hand-written SQL could read around a builder's tenant condition, tried the same way on
 * every engine: a `db.with()` key spelled in another case than the body's name for it (engines
 * fold or compare names differently), and a `raw()` condition with a top-level OR.
 */
import { expect } from "vitest"
import { type Db, raw } from "../../../examples/analytics/sql.js"

export const KEY_SPELLINGS = ["orders", "Orders", "ORDERS"] as const
export const BODY_SPELLINGS = ["orders", "Orders", "ORDERS", '"orders"', '"Orders"'] as const

/** What a body reading a CTE got: its row count, or whether db.with() or the engine refused it. */
export type ReadOutcome = number | "refused by db.with()" | "refused by the engine"

const readThrough = async (db: Db, tenant: string, key: string, body: string): Promise<ReadOutcome> => {
  let query
  try {
    query = db.with({ [key]: db.table("orders").where("tenant_id", "eq", tenant) }, `SELECT count(*) AS n FROM ${body}`)
  } catch {
    return "refused by db.with()"
  }
  // An engine that resolves the name to no table (or a guard that refuses it) reads nothing.
  return query.execute().then(([row]) => Number(row?.n), () => "refused by the engine" as const)
}

/** Every key spelling × body spelling: what `SELECT count(*) FROM <body>` over a CTE keyed `<key>` got. */
export const readsThroughEveryKeySpelling = async (db: Db, tenant: string): Promise<Record<string, ReadOutcome>> => {
  const outcomes: Record<string, ReadOutcome> = {}
  for (const key of KEY_SPELLINGS) {
    for (const body of BODY_SPELLINGS) outcomes[`key ${key}, body ${body}`] = await readThrough(db, tenant, key, body)
  }
  return outcomes
}

/** The tenants whose orders a builder scoped to `tenant` reads with a raw condition holding an OR. */
export const tenantsReadWithRawOr = async (db: Db, tenant: string): Promise<Array<string>> => {
  const rows = await db
    .table("orders")
    .where("tenant_id", "eq", tenant)
    .where(raw("region = 'emea' OR amount"), "gte", 0)
    .select("tenant_id")
    .groupBy("tenant_id")
    .orderBy("tenant_id")
    .execute()
  return rows.map((row) => String(row.tenant_id))
}

/**
 * A key with capital letters is refused where it is defined; the lower-case key's CTE is what the
 * body reads, or the engine finds no such table: never more than the tenant's rows.
 */
export const expectOnlyScopedReads = (outcomes: Readonly<Record<string, ReadOutcome>>, tenantRows: number): void => {
  for (const [spelling, outcome] of Object.entries(outcomes)) {
    if (spelling.startsWith("key orders,")) expect([tenantRows, "refused by the engine"], spelling).toContain(outcome)
    else expect(outcome, spelling).toBe("refused by db.with()")
  }
  expect(outcomes["key orders, body orders"]).toBe(tenantRows)
}
