import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { datasetCatalogueEntry } from "../../src/datasets/catalogue.js"
import { checkDatasetQuery } from "../../src/datasets/decode.js"
import { FILTER_OPS } from "../../src/datasets/filterOps.js"
import { datasetQuerySchema } from "../../src/datasets/querySchema.js"
import { Orders } from "./ordersModel.js"

const GRAINS = ["day", "week", "month", "quarter", "year"]

describe("the catalogue entry", () => {
  it("lists the model's fields with kinds, grains and labels, and the filter ops", () => {
    expect(datasetCatalogueEntry(Orders)).toEqual({
      name: "orders",
      description: "One row per order",
      dimensions: [
        { name: "region", kind: "string" },
        { name: "category", kind: "string" },
        { name: "product", kind: "string", label: "Product" },
        { name: "day", kind: "time", grains: GRAINS },
        { name: "quantity", kind: "number" },
        { name: "multi", kind: "boolean", description: "More than one item" }
      ],
      measures: [
        { name: "revenue", aggregation: "sum" },
        { name: "orders", aggregation: "count" },
        { name: "customers", aggregation: "countDistinct" },
        { name: "avgOrder", aggregation: "avg" },
        { name: "minOrder", aggregation: "min" },
        { name: "maxOrder", aggregation: "max" },
        { name: "revenuePerCustomer", aggregation: "ratio" }
      ],
      filterOps: ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "contains", "isNull"]
    })
  })
})

type Schema = Readonly<Record<string, unknown>>

/** A value the schema accepts, for the schemas the query schema uses. */
const sample = (schema: Schema): unknown => {
  if (Array.isArray(schema.prefixItems)) return (schema.prefixItems as ReadonlyArray<Schema>).map(sample)
  if (schema.type === "array") return [sample(schema.items as Schema)]
  if (typeof schema.pattern === "string") return "2025-03-01"
  return { string: "x", number: 1, boolean: true }[schema.type as string]
}

describe("the query body's JSON Schema", () => {
  const schema = datasetQuerySchema(Orders) as Schema & { properties: Record<string, Schema> }
  const filterBranches = (schema.properties.filters!.items as { anyOf: ReadonlyArray<{ properties: Record<string, Schema> }> }).anyOf

  it("lists the model's fields and grains as enums, and the limits", () => {
    expect(schema).toMatchObject({ type: "object", additionalProperties: false })
    expect(schema.properties.dimensions).toMatchObject({
      items: { enum: ["region", "category", "product", "day", ...GRAINS.map((g) => `day.${g}`), "quantity", "multi"] }
    })
    expect(schema.properties.measures).toMatchObject({
      items: { enum: ["revenue", "orders", "customers", "avgOrder", "minOrder", "maxOrder", "revenuePerCustomer"] }
    })
    expect(schema.properties.limit).toEqual({ type: "integer", minimum: 1, maximum: 10_000, default: 100 })
  })

  it("allows exactly the field, op and value combinations the decoder accepts", () => {
    const allowed = new Set<string>()
    for (const branch of filterBranches) {
      const op = branch.properties.op!.const as string
      for (const field of branch.properties.field!.enum as ReadonlyArray<string>) {
        allowed.add(`${field} ${op}`)
        const body = { measures: ["orders"], filters: [{ field, op, value: sample(branch.properties.value!) }] }
        expect(Either.isRight(checkDatasetQuery(Orders, body)), `${field} ${op}`).toBe(true)
      }
    }
    const fields = [...(schema.properties.dimensions!.items as { enum: Array<string> }).enum, ...(schema.properties.measures!.items as { enum: Array<string> }).enum]
    for (const field of fields) {
      for (const op of FILTER_OPS) {
        if (allowed.has(`${field} ${op}`)) continue
        const refused = checkDatasetQuery(Orders, { measures: ["orders"], filters: [{ field, op, value: 1 }] })
        expect(Either.isLeft(refused) && refused.left.issues[0]?.path, `${field} ${op}`).toEqual(["filters", 0, "op"])
      }
    }
    expect(allowed.size).toBeGreaterThan(60)
  })
})
