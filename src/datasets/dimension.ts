/** The fields rows are grouped by: their kinds, and the grains a time dimension is asked for with. */

export const DIMENSION_KINDS = ["string", "number", "boolean", "time"] as const
export type DimensionKind = (typeof DIMENSION_KINDS)[number]

/** Finest first: a bare time dimension is asked for at the first. Weeks start on Monday on every dialect. */
export const GRAINS = ["day", "week", "month", "quarter", "year"] as const
export type Grain = (typeof GRAINS)[number]

export interface DimensionOptions {
  /** The column read; default the dimension's key in `dimensions`. */
  readonly column?: string
  readonly label?: string
  readonly description?: string
}

export interface Dimension<K extends DimensionKind = DimensionKind> extends DimensionOptions {
  readonly kind: K
}

const ofKind =
  <K extends DimensionKind>(kind: K) =>
  (options: DimensionOptions = {}): Dimension<K> => ({
    kind,
    column: options.column,
    label: options.label,
    description: options.description
  })

/** `dimension.time({ column: "order_day" })`: a column to group and filter rows by. */
export const dimension = {
  string: ofKind("string"),
  number: ofKind("number"),
  boolean: ofKind("boolean"),
  /** A DATE or timestamp column, asked for at a grain: `"day.month"`. */
  time: ofKind("time")
} as const
