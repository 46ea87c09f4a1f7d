/** The aggregates a dataset answers with. */

export const AGGREGATIONS = ["sum", "count", "countDistinct", "avg", "min", "max", "ratio"] as const
export type Aggregation = (typeof AGGREGATIONS)[number]
export type ColumnAggregation = Exclude<Aggregation, "ratio">

export interface MeasureOptions {
  readonly label?: string
  readonly description?: string
}

export interface ColumnMeasure<A extends ColumnAggregation = ColumnAggregation> extends MeasureOptions {
  readonly aggregation: A
  /** The column aggregated; default the measure's key (`count` without one counts rows). */
  readonly column: string | undefined
}

/** `numerator / NULLIF(denominator, 0)`, both naming column measures of the same dataset. */
export interface RatioMeasure<N extends string = string, D extends string = string> extends MeasureOptions {
  readonly aggregation: "ratio"
  readonly numerator: N
  readonly denominator: D
}

export type Measure = ColumnMeasure | RatioMeasure

const ofColumn =
  <A extends ColumnAggregation>(aggregation: A) =>
  (column?: string, options: MeasureOptions = {}): ColumnMeasure<A> => ({
    aggregation,
    column,
    label: options.label,
    description: options.description
  })

/** `measure.sum("amount")`, `measure.count()`, `measure.ratio("revenue", "customers")`. */
export const measure = {
  sum: ofColumn("sum"),
  /** Rows of the group; with a column, its non-null values. */
  count: ofColumn("count"),
  countDistinct: ofColumn("countDistinct"),
  avg: ofColumn("avg"),
  min: ofColumn("min"),
  max: ofColumn("max"),
  ratio: <const N extends string, const D extends string>(
    numerator: N,
    denominator: D,
    options: MeasureOptions = {}
  ): RatioMeasure<N, D> => ({
    aggregation: "ratio",
    numerator,
    denominator,
    label: options.label,
    description: options.description
  })
} as const

/** Counts are whole numbers on every engine; the other measures are any number. */
export const isCount = (measure: Measure): boolean => measure.aggregation === "count" || measure.aggregation === "countDistinct"
