import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { checkDatasetQuery } from "../../src/datasets/decode.js"
import { DatasetValueError, normalizeRows } from "../../src/datasets/normalize.js"
import { Orders } from "./ordersModel.js"

const query = Either.getOrThrow(
  checkDatasetQuery(Orders, { dimensions: ["day.month", "day", "quantity", "multi", "region"], measures: ["orders", "revenue", "avgOrder"] })
)

const row = (values: Readonly<Record<string, unknown>>) => normalizeRows(query, [values])[0]

describe("values as drivers give them", () => {
  it("are one JSON shape: dates, integers, numbers, booleans, text", () => {
    const shapes = [
      // node-postgres: DATE as a local Date, BIGINT and NUMERIC as text.
      { "day.month": new Date(2025, 2, 1), day: new Date(2025, 2, 7), quantity: "3", multi: true, region: "na", orders: "12", revenue: "1234.50", avgOrder: "102.875" },
      // ClickHouse JSON: 64-bit integers as text, Bool or UInt8, DateTime text.
      { "day.month": "2025-03-01", day: "2025-03-07 00:00:00.000", quantity: 3, multi: 1, region: "na", orders: "12", revenue: 1234.5, avgOrder: 102.875 },
      // A driver giving BIGINT as bigint.
      { "day.month": "2025-03-01T00:00:00", day: "2025-03-07", quantity: 3n, multi: "t", region: "na", orders: 12n, revenue: "1234.5", avgOrder: 102.875 }
    ]
    for (const values of shapes) {
      expect(row(values)).toEqual({ "day.month": "2025-03-01", day: "2025-03-07", quantity: 3, multi: true, region: "na", orders: 12, revenue: 1234.5, avgOrder: 102.875 })
    }
  })

  it("keep a time of day as date-time text, nulls as null, and the names in the order asked", () => {
    const values = { region: null, multi: 0, quantity: null, day: "2025-03-07 08:30:00", "day.month": null, avgOrder: null, revenue: null, orders: 0 }
    const normalized = row(values)
    expect(normalized).toEqual({ "day.month": null, day: "2025-03-07T08:30:00", quantity: null, multi: false, region: null, orders: 0, revenue: null, avgOrder: null })
    expect(Object.keys(normalized!)).toEqual(["day.month", "day", "quantity", "multi", "region", "orders", "revenue", "avgOrder"])
  })

  it("refuse what the model's kind cannot hold: a mistake in the model", () => {
    expect(() => row({ revenue: "2025-01-01" })).toThrow(DatasetValueError)
    expect(() => row({ day: "last week" })).toThrow(DatasetValueError)
  })
})
