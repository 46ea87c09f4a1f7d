/**
 * A checked query as one SQL statement. Identifiers come only from the model, quoted; every value
 * is a bound parameter; the tenant condition is ANDed to the whole WHERE; measure filters go to
 * HAVING. One more row than the page is asked for, to learn whether there is more.
 */
import type { CheckedDatasetQuery, CheckedFilter, CheckedOrder } from "./decode.js"
import type { DatasetModel } from "./dataset.js"
import { DIALECTS, type Dialect, type ParamKind } from "./dialect.js"
import type { SqlDialect, SqlParam, SqlStatement } from "./executor.js"
import { GRAINS } from "./dimension.js"
import type { DimensionRef, FieldRef } from "./fields.js"
import type { ColumnMeasure, Measure } from "./measure.js"
import type { DatasetScope } from "./scope.js"

/**
 * The source's alias. Columns are always qualified with it: ClickHouse lets a SELECT alias shadow a
 * column of the same name anywhere in the query (`sum(amount) AS amount`), a qualified name never.
 */
const SOURCE = "source"

const COMPARISONS = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const

const PARAM_KINDS = { string: "text", number: "number", boolean: "boolean", time: "time", measure: "number" } as const

/** The statement being written: its parameters, numbered in the order they appear in the text. */
class Writer {
  readonly values: Array<SqlParam> = []
  constructor(readonly dialect: Dialect) {}

  param(value: SqlParam, kind: ParamKind): string {
    this.values.push(value)
    return this.dialect.placeholder(this.values.length, value, kind)
  }

  params(): SqlStatement["params"] {
    return this.dialect.namedParams ? Object.fromEntries(this.values.map((value, i) => [`p${i + 1}`, value])) : this.values
  }
}

const column = (dialect: Dialect, name: string): string => `${dialect.quote(SOURCE)}.${dialect.quote(name)}`

/** A dimension as answered: a time one at its grain, by day when asked for bare. */
const dimensionSql = (dialect: Dialect, ref: DimensionRef): string => {
  const expression = column(dialect, ref.column)
  return ref.kind === "time" ? dialect.truncate(expression, ref.grain ?? GRAINS[0]) : expression
}

/** A dimension as filtered: a bare time dimension is its column (finer times count, and indexes apply). */
const filteredDimensionSql = (dialect: Dialect, ref: DimensionRef): string =>
  ref.grain === undefined ? column(dialect, ref.column) : dimensionSql(dialect, ref)

const columnMeasureSql = (dialect: Dialect, key: string, measure: ColumnMeasure): string => {
  const target = column(dialect, measure.column ?? key)
  switch (measure.aggregation) {
    case "count":
      return measure.column === undefined ? "count(*)" : `count(${target})`
    case "countDistinct":
      return `count(DISTINCT ${target})`
    default:
      return `${measure.aggregation}(${target})`
  }
}

const measureSql = (dialect: Dialect, dataset: DatasetModel, key: string, measure: Measure): string => {
  if (measure.aggregation !== "ratio") return columnMeasureSql(dialect, key, measure)
  // The model guarantees both name column measures.
  const part = (name: string): string => columnMeasureSql(dialect, name, dataset.measures[name] as ColumnMeasure)
  return `${dialect.toDouble(part(measure.numerator))} / NULLIF(${part(measure.denominator)}, 0)`
}

const fieldSql = (dialect: Dialect, dataset: DatasetModel, field: FieldRef): string =>
  field._tag === "Dimension" ? dimensionSql(dialect, field) : measureSql(dialect, dataset, field.name, field.measure)

const filterSql = (writer: Writer, dataset: DatasetModel, { field, op, value }: CheckedFilter): string => {
  const expression = field._tag === "Dimension" ? filteredDimensionSql(writer.dialect, field) : fieldSql(writer.dialect, dataset, field)
  const kind = PARAM_KINDS[field._tag === "Measure" ? "measure" : field.kind]
  switch (value._tag) {
    case "IsNull":
      return `${expression} IS ${value.isNull ? "" : "NOT "}NULL`
    case "Range":
      return `${expression} BETWEEN ${writer.param(value.from, kind)} AND ${writer.param(value.to, kind)}`
    case "List":
      return `${expression} ${op === "notIn" ? "NOT IN" : "IN"} (${value.values.map((v) => writer.param(v, kind)).join(", ")})`
    case "One":
      if (op === "contains") return writer.dialect.contains(expression, writer.param(value.value, "text"))
      return `${expression} ${COMPARISONS[op as keyof typeof COMPARISONS]} ${writer.param(value.value, kind)}`
  }
}

const orderSql = (dialect: Dialect, dataset: DatasetModel, { field, direction }: CheckedOrder): string =>
  // One place for nulls on every dialect (their defaults differ).
  `${fieldSql(dialect, dataset, field)} ${direction === "asc" ? "ASC" : "DESC"} NULLS LAST`

/**
 * The caller's order, then the dimensions not in it ascending: the groups are unique by their
 * dimensions, so every page boundary falls in the same place on every run.
 */
const ordering = (query: CheckedDatasetQuery): ReadonlyArray<CheckedOrder> => [
  ...query.orderBy,
  ...query.dimensions.filter((d) => !query.orderBy.some((o) => o.field === d)).map((field) => ({ field, direction: "asc" as const }))
]

export const compileDatasetQuery = (
  dataset: DatasetModel,
  query: CheckedDatasetQuery,
  scope: DatasetScope,
  dialectName: SqlDialect
): SqlStatement => {
  const dialect = DIALECTS[dialectName]
  const writer = new Writer(dialect)
  const select = [
    ...query.dimensions.map((d) => `${dimensionSql(dialect, d)} AS ${dialect.quote(d.name)}`),
    ...query.measures.map((m) => `${measureSql(dialect, dataset, m.name, m.measure)} AS ${dialect.quote(m.name)}`)
  ]
  const source = dataset.source.split(".").map(dialect.quote).join(".")
  const lines = [`SELECT ${select.join(", ")}`, `FROM ${source} AS ${dialect.quote(SOURCE)}`]

  const tenant = scope._tag === "Tenant" && dataset.tenantKey !== undefined
    ? `${column(dialect, dataset.tenantKey)} = ${writer.param(scope.tenantId, "text")}`
    : undefined
  const conditions = query.filters.filter((f) => f.field._tag === "Dimension").map((f) => filterSql(writer, dataset, f))
  const filtered = conditions.length === 0 ? undefined : conditions.join(" AND ")
  // The caller's conditions in parentheses: whatever they hold, the tenant's applies to every row.
  if (tenant !== undefined) lines.push(filtered === undefined ? `WHERE ${tenant}` : `WHERE ${tenant} AND (${filtered})`)
  else if (filtered !== undefined) lines.push(`WHERE ${filtered}`)

  if (query.dimensions.length > 0) lines.push(`GROUP BY ${query.dimensions.map((d) => dimensionSql(dialect, d)).join(", ")}`)
  const having = query.filters.filter((f) => f.field._tag === "Measure").map((f) => filterSql(writer, dataset, f))
  if (having.length > 0) lines.push(`HAVING ${having.join(" AND ")}`)
  const order = ordering(query)
  if (order.length > 0) lines.push(`ORDER BY ${order.map((o) => orderSql(dialect, dataset, o)).join(", ")}`)
  // Integers checked by the decoder, written as numbers: older ClickHouse servers take no parameter here.
  lines.push(`LIMIT ${query.limit + 1} OFFSET ${query.offset}`)
  return { sql: lines.join("\n"), params: writer.params() }
}
