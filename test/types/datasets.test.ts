import {
  dataset,
  type Dataset,
  type DatasetFilter,
  type DatasetModel,
  type DatasetQuery,
  type DatasetResult,
  type DatasetRow,
  dimension,
  type DimensionField,
  measure,
  type MeasureField
} from "queryserve"
import { describe, expectTypeOf, it } from "vitest"

// `npm test` runs `tsc --noEmit` over this file: a wrong type, or an `@ts-expect-error` whose line
// stops being an error, fails the build.

const Orders = dataset("orders", {
  source: "orders",
  tenantKey: "tenant_id",
  dimensions: {
    region: dimension.string(),
    product: dimension.string({ column: "product_name", label: "Product" }),
    day: dimension.time({ column: "order_day" }),
    units: dimension.number(),
    paid: dimension.boolean()
  },
  measures: {
    revenue: measure.sum("amount"),
    orders: measure.count(),
    customers: measure.countDistinct("customer_id"),
    avgOrder: measure.avg("amount"),
    revenuePerCustomer: measure.ratio("revenue", "customers")
  }
})

type Orders = typeof Orders

/** A query as a caller writes it: `const` keeps the names literal, `satisfies` checks them against the model. */
const byRegionAndMonth = {
  dimensions: ["region", "day.month"],
  measures: ["revenue", "orders", "avgOrder"],
  filters: [{ field: "day", op: "between", value: ["2025-01-01", "2025-06-30"] }],
  orderBy: [{ field: "revenue", direction: "desc" }]
} as const satisfies DatasetQuery<Orders>

describe("dataset query types", () => {
  it("names the fields the model has: time dimensions also at each grain", () => {
    expectTypeOf<DimensionField<Orders>>().toEqualTypeOf<
      "region" | "product" | "units" | "paid" | "day" | "day.day" | "day.week" | "day.month" | "day.quarter" | "day.year"
    >()
    expectTypeOf<MeasureField<Orders>>().toEqualTypeOf<"revenue" | "orders" | "customers" | "avgOrder" | "revenuePerCustomer">()
  })

  it("types each row by the fields asked for, keyed as written", () => {
    expectTypeOf<DatasetRow<Orders, typeof byRegionAndMonth>>().toEqualTypeOf<{
      readonly region: string | null
      readonly "day.month": string | null
      readonly revenue: number | null
      readonly orders: number
      readonly avgOrder: number | null
    }>()
    expectTypeOf<DatasetRow<Orders, { measures: ["customers"] }>>().toEqualTypeOf<{ readonly customers: number }>()
    expectTypeOf<DatasetRow<Orders, { dimensions: ["paid", "units"] }>>().toEqualTypeOf<{
      readonly paid: boolean | null
      readonly units: number | null
    }>()
    expectTypeOf<DatasetResult<Orders, typeof byRegionAndMonth>["page"]>().toEqualTypeOf<{
      readonly limit: number
      readonly nextCursor: string | null
      readonly hasMore: boolean
    }>()
  })

  it("takes filter values of the field's kind and only the field's ops", () => {
    expectTypeOf<{ field: "units"; op: "gte"; value: 3 }>().toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "region"; op: "in"; value: ["na", "emea"] }>().toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "product"; op: "contains"; value: "Widget" }>().toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "revenue"; op: "between"; value: [10, 20] }>().toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "day.month"; op: "isNull"; value: false }>().toExtend<DatasetFilter<Orders>>()
    // A number for a text field, text for a measure, contains on a number, a range of booleans: refused.
    expectTypeOf<{ field: "region"; op: "eq"; value: 3 }>().not.toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "revenue"; op: "gt"; value: "100" }>().not.toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "units"; op: "contains"; value: "3" }>().not.toExtend<DatasetFilter<Orders>>()
    expectTypeOf<{ field: "paid"; op: "between"; value: [false, true] }>().not.toExtend<DatasetFilter<Orders>>()
  })

  it("refuses names the model does not have", () => {
    // @ts-expect-error no such dimension
    const unknown: DatasetQuery<Orders> = { dimensions: ["country"] }
    // @ts-expect-error region is a string dimension: it has no grains
    const grain: DatasetQuery<Orders> = { dimensions: ["region.month"] }
    // @ts-expect-error revenue is a measure
    const misplaced: DatasetQuery<Orders> = { dimensions: ["revenue"] }
    expectTypeOf([unknown, grain, misplaced]).not.toBeNever()
  })

  it("types toSql's query by the model", () => {
    expectTypeOf(Orders.toSql).parameter(0).toEqualTypeOf<DatasetQuery<DatasetModel<"orders", Orders["dimensions"], Orders["measures"]>>>()
    expectTypeOf(Orders.toSql({ measures: ["revenue"] }, { dialect: "postgres", tenantId: "acme" }).sql).toEqualTypeOf<string>()
  })
})

describe("dataset collections", () => {
  it("holds any dataset where a wide Dataset is expected", () => {
    const datasets: Readonly<Record<string, Dataset>> = { orders: Orders }
    expectTypeOf(datasets.orders).not.toBeNever()
  })
})
