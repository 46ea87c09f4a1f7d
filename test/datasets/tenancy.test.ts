import { fc, test } from "@fast-check/vitest"
import * as Effect from "effect/Effect"
import { dataset, dimension, ValidationError } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REGIONS, TENANT_IDS } from "../../examples/analytics/dataset.js"
import { queryDataset } from "../../src/datasets/run.js"
import { type DemoDatabase, openDemoDatabase, recording } from "./demoDatabase.js"
import { Orders } from "./ordersModel.js"

/** The orders model with the tenant column as a dimension too: every row then says whose it is. */
const Tenanted = dataset("tenanted", {
  source: Orders.source,
  tenantKey: "tenant_id",
  dimensions: { ...Orders.dimensions, tenant: dimension.string({ column: "tenant_id" }) },
  measures: Orders.measures
})

const HOSTILE = [
  "' OR '1'='1",
  "%",
  "_",
  "%na%",
  "n_",
  "\\",
  "'; DROP TABLE orders; --",
  "na' OR region <> 'na",
  "\") OR (1=1",
  "$1",
  "{p1:String}",
  "NA"
]

let db: DemoDatabase
beforeAll(async () => {
  db = await openDemoDatabase(20_000)
})
afterAll(() => db?.close())

const ask = (tenantId: string, body: unknown, executor = db.executor) =>
  Effect.runPromise(Effect.either(queryDataset(Tenanted, body, { executor, tenantId, auth: null })))

const text = fc.oneof(fc.constantFrom(...TENANT_IDS, ...REGIONS, "hardware", "Widget", ...HOSTILE), fc.string({ maxLength: 12 }))
const isoDay = fc.date({ min: new Date("2024-06-01"), max: new Date("2026-06-01"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
const amount = fc.integer({ min: -10, max: 5000 })

const stringFilter = fc.oneof(
  fc.record({ field: fc.constantFrom("region", "category", "product", "tenant"), op: fc.constantFrom("eq", "neq", "contains"), value: text }),
  fc.record({ field: fc.constantFrom("region", "tenant"), op: fc.constantFrom("in", "notIn"), value: fc.array(text, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field: fc.constant("category"), op: fc.constant("isNull"), value: fc.boolean() })
)
const orderedFilter = fc.oneof(
  fc.record({ field: fc.constant("quantity"), op: fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte"), value: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ field: fc.constantFrom("day", "day.month", "day.week"), op: fc.constantFrom("gte", "lt"), value: isoDay }),
  fc.record({ field: fc.constant("day"), op: fc.constant("between"), value: fc.tuple(isoDay, isoDay) }),
  fc.record({ field: fc.constantFrom("revenue", "orders", "avgOrder"), op: fc.constantFrom("gt", "lte"), value: amount }),
  fc.record({ field: fc.constant("multi"), op: fc.constantFrom("eq", "neq"), value: fc.boolean() })
)

const query = fc.record({
  dimensions: fc.subarray(["region", "category", "day.month", "day.week", "quantity", "multi", "product"], { maxLength: 3 }),
  measures: fc.subarray(["revenue", "orders", "customers", "avgOrder", "revenuePerCustomer"]),
  filters: fc.array(fc.oneof(stringFilter, orderedFilter), { maxLength: 3 }),
  limit: fc.integer({ min: 1, max: 500 })
})

describe("tenant isolation", () => {
  test.prop([fc.constantFrom(...TENANT_IDS), query], { numRuns: 150 })(
    "a tenant's answer never holds another tenant's rows, whatever it asks",
    async (tenant, body) => {
      const answer = await ask(tenant, { ...body, dimensions: ["tenant", ...body.dimensions] })
      if (answer._tag === "Left") throw answer.left
      for (const row of answer.right.data) expect(row.tenant).toBe(tenant)
    }
  )

  it("answers no rows to a filter asking for another tenant's", async () => {
    for (const tenant of TENANT_IDS) {
      const others = TENANT_IDS.filter((t) => t !== tenant)
      const answer = await ask(tenant, { dimensions: ["tenant"], measures: ["orders"], filters: [{ field: "tenant", op: "in", value: others }] })
      expect(answer).toMatchObject({ right: { data: [] } })
    }
  })
})

describe("injection attempts", () => {
  const rowsOf = async (body: unknown, tenantId = "acme") => {
    const answer = await ask(tenantId, body)
    if (answer._tag === "Left") throw answer.left
    return answer.right.data
  }

  it.each(HOSTILE)("in every text op, %j finds no extra rows", async (value) => {
    const base = { dimensions: ["region"], measures: ["orders"] }
    const all = await rowsOf(base)
    expect(all.length).toBe(REGIONS.length)
    for (const op of ["eq", "contains"] as const) expect(await rowsOf({ ...base, filters: [{ field: "region", op, value }] })).toEqual([])
    expect(await rowsOf({ ...base, filters: [{ field: "product", op: "contains", value }] })).toEqual([])
    expect(await rowsOf({ ...base, filters: [{ field: "region", op: "in", value: [value, `${value}'`] }] })).toEqual([])
    expect(await rowsOf({ ...base, filters: [{ field: "region", op: "neq", value }] })).toEqual(all)
    expect(await rowsOf({ ...base, filters: [{ field: "region", op: "notIn", value: [value] }] })).toEqual(all)
    // As the tenant id itself: no tenant has that id.
    expect(await rowsOf(base, value)).toEqual([])
  })

  it("refuses hostile text in every op of the other kinds, before running anything", async () => {
    const executor = recording(db.executor)
    const ops: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["quantity", ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "isNull"]],
      ["day", ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "isNull"]],
      ["multi", ["eq", "neq", "isNull"]],
      ["revenue", ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "isNull"]],
      ["category", ["isNull"]]
    ]
    for (const [field, fieldOps] of ops) {
      for (const op of fieldOps) {
        for (const value of [HOSTILE[0], [HOSTILE[0], HOSTILE[6]]]) {
          const answer = await ask("acme", { measures: ["orders"], filters: [{ field, op, value }] }, executor)
          expect(answer).toMatchObject({ left: expect.any(ValidationError) })
        }
      }
    }
    expect(executor.statements).toEqual([])
  })
})
