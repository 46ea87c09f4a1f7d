/** The fields a query may name, as the model defines them: dimensions (time ones with a grain) and measures. */
import type { DatasetModel } from "./dataset.js"
import { type DimensionKind, type Grain, GRAINS } from "./dimension.js"
import type { FieldKind } from "./filterOps.js"
import type { Measure } from "./measure.js"

export interface DimensionRef {
  readonly _tag: "Dimension"
  /** As the query wrote it: the alias of its column (`day.month`). */
  readonly name: string
  readonly kind: DimensionKind
  readonly column: string
  /**
   * The grain asked for (`day.month`); undefined for the other kinds and for a bare time dimension,
   * which answers at the finest grain and filters on the column itself.
   */
  readonly grain: Grain | undefined
}

export interface MeasureRef {
  readonly _tag: "Measure"
  readonly name: string
  readonly measure: Measure
}

export type FieldRef = DimensionRef | MeasureRef

export const fieldKind = (field: FieldRef): FieldKind => (field._tag === "Measure" ? "measure" : field.kind)

const own = <V>(record: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

/** Every name a query may ask for as a dimension, in model order: `day`, `day.day`, `day.week`, … */
export const dimensionFieldNames = (dataset: DatasetModel): ReadonlyArray<string> =>
  Object.entries(dataset.dimensions).flatMap(([key, d]) => (d.kind === "time" ? [key, ...GRAINS.map((g) => `${key}.${g}`)] : [key]))

export const measureFieldNames = (dataset: DatasetModel): ReadonlyArray<string> => Object.keys(dataset.measures)

/** The dimension `name` stands for, or the message saying why it stands for none (with what is allowed). */
export const resolveDimension = (dataset: DatasetModel, name: string): DimensionRef | string => {
  const dot = name.indexOf(".")
  const key = dot < 0 ? name : name.slice(0, dot)
  const dimension = own(dataset.dimensions, key)
  const allowed = `the dimensions are ${dimensionFieldNames(dataset).join(", ") || "none"}`
  if (dimension === undefined) {
    return own(dataset.measures, name) !== undefined
      ? `${JSON.stringify(name)} is a measure, not a dimension; ${allowed}`
      : `unknown dimension ${JSON.stringify(name)}; ${allowed}`
  }
  const column = dimension.column ?? key
  if (dimension.kind !== "time") {
    return dot < 0 ? { _tag: "Dimension", name, kind: dimension.kind, column, grain: undefined } : `${JSON.stringify(key)} is a ${dimension.kind} dimension and has no grains; ${allowed}`
  }
  if (dot < 0) return { _tag: "Dimension", name, kind: "time", column, grain: undefined }
  const grain = GRAINS.find((g) => g === name.slice(dot + 1))
  if (grain === undefined) {
    return `unknown grain ${JSON.stringify(name.slice(dot + 1))} of time dimension ${JSON.stringify(key)}; the grains are ${GRAINS.join(", ")}`
  }
  return { _tag: "Dimension", name, kind: "time", column, grain }
}

export const resolveMeasure = (dataset: DatasetModel, name: string): MeasureRef | string => {
  const measure = own(dataset.measures, name)
  if (measure !== undefined) return { _tag: "Measure", name, measure }
  const allowed = `the measures are ${measureFieldNames(dataset).join(", ") || "none"}`
  return typeof resolveDimension(dataset, name) !== "string"
    ? `${JSON.stringify(name)} is a dimension, not a measure; ${allowed}`
    : `unknown measure ${JSON.stringify(name)}; ${allowed}`
}

/** A dimension or a measure, for filters and orderBy. */
export const resolveField = (dataset: DatasetModel, name: string): FieldRef | string => {
  if (own(dataset.measures, name) !== undefined) return resolveMeasure(dataset, name)
  const dimension = resolveDimension(dataset, name)
  if (typeof dimension !== "string" || own(dataset.dimensions, name.split(".")[0]!) !== undefined) return dimension
  return `unknown field ${JSON.stringify(name)}; the fields are ${[...dimensionFieldNames(dataset), ...measureFieldNames(dataset)].join(", ")}`
}
