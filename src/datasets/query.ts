/**
 * The types of a dataset's queries and answers, read from its model: the typed client and the React
 * hooks name fields the model has and get rows typed by their kinds.
 */
import type { Page } from "../pagination/page.js"
import type { DatasetModel, Dimensions, Measures } from "./dataset.js"
import type { Dimension, DimensionKind, Grain } from "./dimension.js"
import type { FieldKind, ListOp, RangeOp, ScalarOp, TextOp } from "./filterOps.js"
import type { Measure } from "./measure.js"

type DimensionsOf<DS> = DS extends DatasetModel<string, infer D, Measures> ? D : never
type MeasuresOf<DS> = DS extends DatasetModel<string, Dimensions, infer M> ? M : never

/** A dimension as a query names it: its key, or for a time dimension also `key.grain`. */
export type DimensionField<DS> = {
  [K in keyof DimensionsOf<DS> & string]: DimensionsOf<DS>[K] extends Dimension<"time"> ? K | `${K}.${Grain}` : K
}[keyof DimensionsOf<DS> & string]

export type MeasureField<DS> = keyof MeasuresOf<DS> & string

export type DatasetField<DS> = DimensionField<DS> | MeasureField<DS>

/** The kind of a field: its dimension's (`day.month` is its dimension `day`'s), or "measure". */
type KindOf<DS, F> = F extends MeasureField<DS>
  ? "measure"
  : F extends `${infer Key}.${Grain}`
  ? DimensionKindOf<DS, Key>
  : DimensionKindOf<DS, F>

type DimensionKindOf<DS, Key> = Key extends keyof DimensionsOf<DS>
  ? DimensionsOf<DS>[Key] extends Dimension<infer K extends DimensionKind>
    ? K
    : never
  : never

/** The value of each kind, in filters and in rows: time as ISO text. */
interface KindValue {
  readonly string: string
  readonly number: number
  readonly boolean: boolean
  readonly time: string
  readonly measure: number
}

type FilterOn<F, K extends FieldKind> =
  | { readonly field: F; readonly op: ScalarOp<K>; readonly value: KindValue[K] }
  | { readonly field: F; readonly op: ListOp<K>; readonly value: ReadonlyArray<KindValue[K]> }
  | { readonly field: F; readonly op: RangeOp<K>; readonly value: readonly [KindValue[K], KindValue[K]] }
  | { readonly field: F; readonly op: TextOp<K>; readonly value: string }
  | { readonly field: F; readonly op: "isNull"; readonly value: boolean }

/** A filter on any field of the dataset, its operator and value fitting the field's kind. */
export type DatasetFilter<DS> = { [F in DatasetField<DS>]: FilterOn<F, KindOf<DS, F>> }[DatasetField<DS>]

export interface DatasetOrder<DS> {
  readonly field: DatasetField<DS>
  /** Default "asc". */
  readonly direction?: "asc" | "desc"
}

/** The JSON body of a dataset query. */
export interface DatasetQuery<DS = DatasetModel> {
  readonly dimensions?: ReadonlyArray<DimensionField<DS>>
  readonly measures?: ReadonlyArray<MeasureField<DS>>
  readonly filters?: ReadonlyArray<DatasetFilter<DS>>
  readonly orderBy?: ReadonlyArray<DatasetOrder<DS>>
  /** Rows per page, 1 to 10,000; default 100. */
  readonly limit?: number
  /** `page.nextCursor` of the previous page, with the same query. */
  readonly cursor?: string
}

type Asked<Q, List extends "dimensions" | "measures"> = Q extends { readonly [K in List]?: ReadonlyArray<infer F> } ? F : never

type MeasureValue<M> = M extends Measure ? (M["aggregation"] extends "count" | "countDistinct" ? number : number | null) : never

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/**
 * One row of the answer to `Q`: keyed by the fields asked for, as written (`"day.month"`). A
 * dimension may be null (a group of rows without a value); so may every measure but the counts.
 */
export type DatasetRow<DS, Q> = Simplify<
  { readonly [F in Asked<Q, "dimensions"> & string]: KindValue[KindOf<DS, F> & DimensionKind] | null } & {
    readonly [F in Asked<Q, "measures"> & keyof MeasuresOf<DS>]: MeasureValue<MeasuresOf<DS>[F]>
  }
>

/** The answer to `Q`: a page of rows. */
export interface DatasetAnswer<Row = Readonly<Record<string, unknown>>> {
  readonly data: ReadonlyArray<Row>
  readonly page: Page
}

export type DatasetResult<DS, Q> = DatasetAnswer<DatasetRow<DS, Q>>
