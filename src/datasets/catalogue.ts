/** What callers (and agents) are told about a dataset: its fields, their kinds and grains, and the filter ops. */
import type { DatasetModel } from "./dataset.js"
import { type DimensionKind, type Grain, GRAINS } from "./dimension.js"
import { FILTER_OPS, type FilterOp } from "./filterOps.js"
import type { Aggregation } from "./measure.js"

export interface CatalogueDimension {
  readonly name: string
  readonly kind: DimensionKind
  /** Time dimensions only. */
  readonly grains?: ReadonlyArray<Grain>
  readonly label?: string
  readonly description?: string
}

export interface CatalogueMeasure {
  readonly name: string
  readonly aggregation: Aggregation
  readonly label?: string
  readonly description?: string
}

export interface DatasetCatalogueEntry {
  readonly name: string
  /** Empty when the model has none. */
  readonly description: string
  readonly dimensions: ReadonlyArray<CatalogueDimension>
  readonly measures: ReadonlyArray<CatalogueMeasure>
  readonly filterOps: ReadonlyArray<FilterOp>
}

/** Optional texts only when given: JSON has no undefined. */
const texts = (source: { readonly label?: string | undefined; readonly description?: string | undefined }) => ({
  ...(source.label !== undefined ? { label: source.label } : {}),
  ...(source.description !== undefined ? { description: source.description } : {})
})

export const datasetCatalogueEntry = (dataset: DatasetModel): DatasetCatalogueEntry => ({
  name: dataset.name,
  description: dataset.description ?? "",
  dimensions: Object.entries(dataset.dimensions).map(([name, d]) => ({
    name,
    kind: d.kind,
    ...(d.kind === "time" ? { grains: GRAINS } : {}),
    ...texts(d)
  })),
  measures: Object.entries(dataset.measures).map(([name, m]) => ({ name, aggregation: m.aggregation, ...texts(m) })),
  filterOps: FILTER_OPS
})
