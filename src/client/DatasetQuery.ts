import type { Page } from "./Page.js"

// The shape of any dataset query and answer, for an API whose type does not say its datasets. With
// datasets in the API's type, createDatasetClient and useDataset type them by the model instead.

export type DatasetFilterOp = "eq" | "neq" | "in" | "notIn" | "gt" | "gte" | "lt" | "lte" | "between" | "contains" | "isNull"

/** The JSON body of `POST {basePath}/datasets/{name}`: at least one dimension or measure. */
export interface DatasetQuery {
  /** Dimension names; a time dimension with its grain, e.g. `"day.month"`. */
  readonly dimensions?: ReadonlyArray<string>
  readonly measures?: ReadonlyArray<string>
  readonly filters?: ReadonlyArray<{ readonly field: string; readonly op: DatasetFilterOp; readonly value: unknown }>
  readonly orderBy?: ReadonlyArray<{ readonly field: string; readonly direction: "asc" | "desc" }>
  readonly limit?: number
  /** A previous answer's `page.nextCursor`. */
  readonly cursor?: string
}

/** A row of a dataset's answer, keyed by the names the query asked for, exactly as written. */
export type DatasetRow = Readonly<Record<string, string | number | boolean | null>>

export type DatasetAnswer = Page<DatasetRow>
