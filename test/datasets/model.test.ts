import { dataset, dimension, measure } from "queryserve"
import { describe, expect, it } from "vitest"

const valid = { source: "orders", dimensions: { region: dimension.string() }, measures: { revenue: measure.sum("amount") } }

/** The define-time error `config` is refused with. */
const refused = (config: object, name = "orders") => expect(() => dataset(name, config as typeof valid))

describe("dataset definitions", () => {
  it("accepts a model and keeps what it was given", () => {
    const orders = dataset("orders", { ...valid, tenantKey: "tenant_id", roles: ["analyst"], cacheTtlMs: 60_000 })
    expect(orders).toMatchObject({ name: "orders", source: "orders", tenantKey: "tenant_id", roles: ["analyst"], scopes: [], cacheTtlMs: 60_000 })
    expect(dataset("o", { ...valid, source: "analytics.orders" }).source).toBe("analytics.orders")
  })

  it("refuses any name or column that is not a plain SQL identifier", () => {
    refused(valid, "order-facts").toThrow(/the dataset name must be a plain SQL identifier/)
    refused({ ...valid, source: 'orders"; DROP TABLE x; --' }).toThrow(/each part of source must be a plain SQL identifier/)
    refused({ ...valid, source: "a.b.c" }).toThrow(/source must be "table" or "schema.table"/)
    refused({ ...valid, tenantKey: "tenant id" }).toThrow(/tenantKey must be a plain SQL identifier/)
    refused({ ...valid, dimensions: { "re gion": dimension.string() } }).toThrow(/the dimension name must be/)
    refused({ ...valid, dimensions: { region: dimension.string({ column: "x.y" }) } }).toThrow(/the column of dimension "region"/)
    refused({ ...valid, measures: { revenue: measure.sum("amount)") } }).toThrow(/the column of measure "revenue"/)
    refused({ ...valid, measures: { ["r".repeat(56)]: measure.count() } }).toThrow(/at most 55 characters/)
  })

  it("refuses ratios naming unknown measures, themselves or other ratios", () => {
    refused({ ...valid, measures: { ...valid.measures, perOrder: measure.ratio("revenue", "orders") } }).toThrow(
      /ratio "perOrder": its denominator "orders" is not another measure/
    )
    refused({ ...valid, measures: { self: measure.ratio("self", "self") } }).toThrow(/its numerator "self" is not another measure/)
    refused({
      ...valid,
      measures: { ...valid.measures, n: measure.count(), a: measure.ratio("revenue", "n"), b: measure.ratio("a", "n") }
    }).toThrow(/ratio "b": its numerator "a" is a ratio/)
  })

  it("refuses one name for two fields, even in another case", () => {
    refused({ ...valid, measures: { region: measure.count() } }).toThrow(/measure "region" has the name of dimension "region"/)
    refused({ ...valid, measures: { Revenue: measure.count(), revenue: measure.count() } }).toThrow(/has the name of measure "Revenue"/)
  })

  it("refuses an empty model, fields not made by dimension/measure, and bad options", () => {
    refused({ source: "orders", dimensions: {}, measures: {} }).toThrow(/at least one dimension or measure/)
    refused({ ...valid, dimensions: { region: { kind: "text" } } }).toThrow(/dimension "region" must be made with dimension.string\(\)/)
    refused({ ...valid, measures: { revenue: { aggregation: "median", column: "amount" } } }).toThrow(/measure "revenue" must be made with measure.sum\(\)/)
    refused({ ...valid, roles: "analyst" }).toThrow(/roles must be a list of non-empty names/)
    refused({ ...valid, cacheTtlMs: -1 }).toThrow(/cacheTtlMs must be a number of milliseconds/)
    refused({ ...valid, allowUnscoped: true }).toThrow(/allowUnscoped must be a function/)
  })
})
