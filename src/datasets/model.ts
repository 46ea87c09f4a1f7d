/** A dataset's model as data: what checking, compiling and describing a query read. */
import type { ServeAuthContext } from "../domain/config.js"
import type { Dimension } from "./dimension.js"
import type { Measure } from "./measure.js"

export type Dimensions = Readonly<Record<string, Dimension>>
export type Measures = Readonly<Record<string, Measure>>

/** Decides, for a caller without a tenant, whether a tenant-keyed dataset answers over every tenant: only `true` does. */
export type AllowUnscoped = (auth: ServeAuthContext | null) => boolean

export interface DatasetModel<Name extends string = string, D extends Dimensions = Dimensions, M extends Measures = Measures> {
  readonly name: Name
  readonly source: string
  readonly tenantKey: string | undefined
  readonly description: string | undefined
  readonly dimensions: D
  readonly measures: M
  readonly roles: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly cacheTtlMs: number | undefined
  readonly allowUnscoped: AllowUnscoped | undefined
}

export interface DatasetConfig<D extends Dimensions, M extends Measures> {
  /** The table or view, `name` or `schema.name`; quoted per dialect. */
  readonly source: string
  /** The tenant column: when set, every query is filtered on the caller's tenant. */
  readonly tenantKey?: string
  readonly description?: string
  readonly dimensions: D
  readonly measures: M
  /** Guards as `requireRole` / `requireScope`: the caller needs one of the roles and all the scopes. */
  readonly roles?: ReadonlyArray<string>
  readonly scopes?: ReadonlyArray<string>
  /** Result cache lifetime, as for endpoints. */
  readonly cacheTtlMs?: number
  readonly allowUnscoped?: AllowUnscoped
}
