/**
 * A dataset query body (unknown JSON) checked against the model. Every refusal is one
 * ValidationError listing each problem with its path and what is allowed there; nothing runs.
 */
import * as Either from "effect/Either"
import { ValidationError, type ValidationIssue } from "../domain/errors.js"
import { capIssues, formatValue } from "../domain/issueMessages.js"
import { decodeCursor } from "../pagination/cursor.js"
import type { DatasetModel } from "./dataset.js"
import { type DimensionRef, type FieldRef, fieldKind, type MeasureRef, resolveDimension, resolveField, resolveMeasure } from "./fields.js"
import { FILTER_OPS, type FilterOp, OPS_BY_KIND } from "./filterOps.js"
import { checkFilterValue, type FilterValue } from "./filterValue.js"

export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 10_000

export const QUERY_KEYS = ["dimensions", "measures", "filters", "orderBy", "limit", "cursor"] as const
const FILTER_KEYS = ["field", "op", "value"] as const
const ORDER_KEYS = ["field", "direction"] as const
export const DIRECTIONS = ["asc", "desc"] as const
export type Direction = (typeof DIRECTIONS)[number]

export interface CheckedFilter {
  readonly field: FieldRef
  readonly op: FilterOp
  readonly value: FilterValue
}

export interface CheckedOrder {
  readonly field: FieldRef
  readonly direction: Direction
}

/** A query the model accepts: fields resolved, values checked, the cursor turned into its offset. */
export interface CheckedDatasetQuery {
  readonly dimensions: ReadonlyArray<DimensionRef>
  readonly measures: ReadonlyArray<MeasureRef>
  readonly filters: ReadonlyArray<CheckedFilter>
  readonly orderBy: ReadonlyArray<CheckedOrder>
  readonly limit: number
  readonly offset: number
  /** The canonical text of the dataset and every input but `limit` and `cursor`: what the query's cursors are bound to. */
  readonly binding: string
}

type Path = ReadonlyArray<PropertyKey>
type Issues = Array<ValidationIssue>
type AnyRecord = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is AnyRecord => typeof value === "object" && value !== null && !Array.isArray(value)

const quoted = (names: ReadonlyArray<string>): string => names.map((n) => JSON.stringify(n)).join(", ")

/** Issues for the keys of `record` not in `allowed`: unknown keys are refused, never ignored. */
const extraKeys = (record: AnyRecord, allowed: ReadonlyArray<string>, path: Path, issues: Issues): void => {
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) issues.push({ path: [...path, key], message: `is not allowed; the keys are ${allowed.join(", ")}` })
  }
}

/** The items of an optional list of names, each resolved; unknown and repeated names are issues. */
const names = <R extends FieldRef>(
  value: unknown,
  key: "dimensions" | "measures",
  resolve: (name: string) => R | string,
  issues: Issues
): ReadonlyArray<R> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) return void issues.push({ path: [key], message: `expected a list of names, got ${formatValue(value)}` }), []
  const refs: Array<R> = []
  value.forEach((name: unknown, i) => {
    const ref = typeof name === "string" ? resolve(name) : `expected a name, got ${formatValue(name)}`
    if (typeof ref === "string") issues.push({ path: [key, i], message: ref })
    else if (refs.some((r) => r.name === ref.name)) issues.push({ path: [key, i], message: `${JSON.stringify(name)} is listed twice` })
    else refs.push(ref)
  })
  return refs
}

const filter = (dataset: DatasetModel, item: unknown, path: Path, issues: Issues): CheckedFilter | undefined => {
  if (!isRecord(item)) return void issues.push({ path, message: `expected { field, op, value }, got ${formatValue(item)}` })
  extraKeys(item, FILTER_KEYS, path, issues)
  const field = typeof item.field === "string" ? resolveField(dataset, item.field) : `expected a field name, got ${formatValue(item.field)}`
  if (typeof field === "string") return void issues.push({ path: [...path, "field"], message: field })
  const ops = OPS_BY_KIND[fieldKind(field)]
  const op = item.op as FilterOp
  if (!ops.includes(op)) {
    const message = FILTER_OPS.includes(op)
      ? `${JSON.stringify(op)} does not apply to ${JSON.stringify(field.name)}, a ${fieldKind(field)}; its ops are ${ops.join(", ")}`
      : `unknown op ${formatValue(item.op)}; the ops for ${JSON.stringify(field.name)} are ${ops.join(", ")}`
    return void issues.push({ path: [...path, "op"], message })
  }
  const checked = checkFilterValue(fieldKind(field), op, item.value)
  if ("issue" in checked) return void issues.push({ path: [...path, "value", ...checked.issue.path], message: checked.issue.message })
  return { field, op, value: checked.value }
}

const filters = (dataset: DatasetModel, value: unknown, issues: Issues): ReadonlyArray<CheckedFilter> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) return void issues.push({ path: ["filters"], message: `expected a list of { field, op, value }, got ${formatValue(value)}` }), []
  return value.flatMap((item: unknown, i) => filter(dataset, item, ["filters", i], issues) ?? [])
}

const order = (asked: ReadonlyArray<FieldRef>, item: unknown, path: Path, issues: Issues): CheckedOrder | undefined => {
  if (!isRecord(item)) return void issues.push({ path, message: `expected { field, direction }, got ${formatValue(item)}` })
  extraKeys(item, ORDER_KEYS, path, issues)
  const field = asked.find((f) => f.name === item.field)
  if (field === undefined) {
    const message = `expected a field the query asks for (${quoted(asked.map((f) => f.name)) || "none"}), got ${formatValue(item.field)}`
    return void issues.push({ path: [...path, "field"], message })
  }
  const direction = item.direction ?? "asc"
  if (!DIRECTIONS.includes(direction as Direction)) {
    return void issues.push({ path: [...path, "direction"], message: `expected "asc" or "desc", got ${formatValue(item.direction)}` })
  }
  return { field, direction: direction as Direction }
}

const orderBy = (asked: ReadonlyArray<FieldRef>, value: unknown, issues: Issues): ReadonlyArray<CheckedOrder> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) return void issues.push({ path: ["orderBy"], message: `expected a list of { field, direction }, got ${formatValue(value)}` }), []
  const orders: Array<CheckedOrder> = []
  value.forEach((item: unknown, i) => {
    const one = order(asked, item, ["orderBy", i], issues)
    if (one === undefined) return
    if (orders.some((o) => o.field === one.field)) issues.push({ path: ["orderBy", i, "field"], message: `${JSON.stringify(one.field.name)} is ordered by twice` })
    else orders.push(one)
  })
  return orders
}

const limit = (value: unknown, issues: Issues): number => {
  if (value === undefined) return DEFAULT_LIMIT
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_LIMIT) return value
  issues.push({ path: ["limit"], message: `expected an integer from 1 to ${MAX_LIMIT}, got ${formatValue(value)}` })
  return DEFAULT_LIMIT
}

const filterText = ({ field, op, value }: CheckedFilter): unknown => {
  switch (value._tag) {
    case "One":
      return [field.name, op, value.value]
    case "List":
      return [field.name, op, value.values]
    case "Range":
      return [field.name, op, [value.from, value.to]]
    case "IsNull":
      return [field.name, op, value.isNull]
  }
}

/** Canonical: the names as asked (their order changes the answer), values as checked, directions spelled out. */
const bindingOf = (dataset: DatasetModel, query: Omit<CheckedDatasetQuery, "limit" | "offset" | "binding">): string =>
  JSON.stringify([
    dataset.name,
    query.dimensions.map((d) => d.name),
    query.measures.map((m) => m.name),
    query.filters.map(filterText),
    query.orderBy.map((o) => [o.field.name, o.direction])
  ])

const isEmptyList = (value: unknown): boolean => value === undefined || (Array.isArray(value) && value.length === 0)

const refuse = (issues: Issues): Either.Either<never, ValidationError> =>
  Either.left(new ValidationError({ message: "Invalid dataset query", issues: capIssues(issues) }))

/** Checks a query body against `dataset`. */
export const checkDatasetQuery = (dataset: DatasetModel, body: unknown): Either.Either<CheckedDatasetQuery, ValidationError> => {
  if (!isRecord(body)) return refuse([{ path: [], message: `expected a query object { ${QUERY_KEYS.join(", ")} }, got ${formatValue(body)}` }])
  const issues: Issues = []
  extraKeys(body, QUERY_KEYS, [], issues)
  const dimensions = names(body.dimensions, "dimensions", (name) => resolveDimension(dataset, name), issues)
  const measures = names(body.measures, "measures", (name) => resolveMeasure(dataset, name), issues)
  if (isEmptyList(body.dimensions) && isEmptyList(body.measures)) issues.push({ path: [], message: "ask for at least one dimension or measure" })
  const checked = {
    dimensions,
    measures,
    filters: filters(dataset, body.filters, issues),
    orderBy: orderBy([...dimensions, ...measures], body.orderBy, issues)
  }
  const rows = limit(body.limit, issues)
  if (issues.length > 0) return refuse(issues)
  const binding = bindingOf(dataset, checked)
  if (body.cursor === undefined) return Either.right({ ...checked, limit: rows, offset: 0, binding })
  return Either.map(decodeCursor(body.cursor, binding), (offset) => ({ ...checked, limit: rows, offset, binding }))
}
