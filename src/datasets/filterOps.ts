/** The filter operators, and which ones each kind of field takes. */
import type { DimensionKind } from "./dimension.js"

export const FILTER_OPS = ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "contains", "isNull"] as const
export type FilterOp = (typeof FILTER_OPS)[number]

/** What a filter compares: a dimension of its kind, or a measure (a number, filtered per group). */
export type FieldKind = DimensionKind | "measure"

/** Kinds whose values have an order: the others take no comparison and no range. */
type OrderedKind = "number" | "time" | "measure"

/** The operators taking one value of the field's kind. */
export type ScalarOp<K extends FieldKind> = "eq" | "neq" | (K extends OrderedKind ? "gt" | "gte" | "lt" | "lte" : never)
/** The operators taking a list of values. */
export type ListOp<K extends FieldKind> = K extends "boolean" ? never : "in" | "notIn"
export type RangeOp<K extends FieldKind> = K extends OrderedKind ? "between" : never
export type TextOp<K extends FieldKind> = K extends "string" ? "contains" : never

const ORDERED: ReadonlyArray<FilterOp> = ["eq", "neq", "in", "notIn", "gt", "gte", "lt", "lte", "between", "isNull"]

/** The same table as the types above, for the checks at run time. */
export const OPS_BY_KIND: Readonly<Record<FieldKind, ReadonlyArray<FilterOp>>> = {
  string: ["eq", "neq", "in", "notIn", "contains", "isNull"],
  number: ORDERED,
  boolean: ["eq", "neq", "isNull"],
  time: ORDERED,
  measure: ORDERED
}

/** How many values an `in` or `notIn` list may hold: each is one bound parameter. */
export const MAX_LIST_VALUES = 1000
