/**
 * `dataset(name, config)`: a governed model of one table or view. Callers pick its dimensions,
 * measures and filters; everything that reaches SQL comes from the model, checked here once.
 */
import * as Either from "effect/Either"
import { identity } from "effect/Function"
import type { ServeAuthContext } from "../domain/config.js"
import { compileDatasetQuery } from "./compile.js"
import { checkDatasetQuery } from "./decode.js"
import { DIMENSION_KINDS, type Dimension } from "./dimension.js"
import type { SqlDialect, SqlStatement } from "./executor.js"
import { checkIdentifier, isPlainIdentifier } from "./identifier.js"
import { AGGREGATIONS, type Measure } from "./measure.js"
import type { DatasetField, DatasetQuery } from "./query.js"
import { datasetScope } from "./scope.js"

export type Dimensions = Readonly<Record<string, Dimension>>
export type Measures = Readonly<Record<string, Measure>>

/** Decides, for a caller without a tenant, whether a tenant-keyed dataset answers over every tenant: only `true` does. */
export type AllowUnscoped = (auth: ServeAuthContext | null) => boolean

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

export interface ToSqlOptions {
  readonly dialect: SqlDialect
  /** The caller's tenant; required on a tenant-keyed dataset unless `allowUnscoped(auth)` is `true`. */
  readonly tenantId?: string | null
  readonly auth?: ServeAuthContext | null
}

/** A dataset's model: what compiling, checking and describing it read. */
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

/** A concrete model's queries are typed by it; the wide `Dataset` takes any body (checked at run time all the same), so every dataset is one. */
type ToSqlQuery<Model> = string extends DatasetField<Model> ? unknown : DatasetQuery<Model>

export interface Dataset<Name extends string = string, D extends Dimensions = Dimensions, M extends Measures = Measures>
  extends DatasetModel<Name, D, M> {
  /**
   * The statement a query compiles to for `dialect`, without running it. Throws the ValidationError
   * a bad query is refused with, or Forbidden (`missing_tenant`) as a run would.
   */
  toSql(query: ToSqlQuery<DatasetModel<Name, D, M>>, options: ToSqlOptions): SqlStatement
}

type AnyRecord = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is AnyRecord => typeof value === "object" && value !== null && !Array.isArray(value)

const describe = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value) : String(value))

const checkDimensions = (fail: (message: string) => never, dimensions: unknown): void => {
  if (!isRecord(dimensions)) fail("dimensions must be an object of dimension.string(), .number(), .boolean() or .time()")
  for (const [key, dimension] of Object.entries(dimensions)) {
    const kind: unknown = isRecord(dimension) ? dimension.kind : undefined
    if (!DIMENSION_KINDS.includes(kind as Dimension["kind"])) {
      fail(`dimension ${JSON.stringify(key)} must be made with dimension.${DIMENSION_KINDS.join("(), dimension.")}()`)
    }
  }
}

const checkMeasures = (fail: (message: string) => never, measures: unknown): void => {
  if (!isRecord(measures)) fail("measures must be an object of measure.sum(), .count(), … or .ratio()")
  for (const [key, measure] of Object.entries(measures)) {
    const aggregation: unknown = isRecord(measure) ? measure.aggregation : undefined
    if (!AGGREGATIONS.includes(aggregation as Measure["aggregation"])) {
      fail(`measure ${JSON.stringify(key)} must be made with measure.${AGGREGATIONS.join("(), measure.")}()`)
    }
    if (aggregation !== "ratio") continue
    const ratio = measure as AnyRecord
    for (const part of ["numerator", "denominator"] as const) {
      const named = measures[String(ratio[part])]
      if (!isRecord(named) || ratio[part] === key) {
        fail(`ratio ${JSON.stringify(key)}: its ${part} ${describe(ratio[part])} is not another measure of the dataset`)
      }
      if (named.aggregation === "ratio") fail(`ratio ${JSON.stringify(key)}: its ${part} ${describe(ratio[part])} is a ratio; name a column measure`)
    }
  }
}

/** Every name and column of the model, checked; field names unique even ignoring case (DuckDB ignores it). */
const checkNames = (name: string, dimensions: Dimensions, measures: Measures): void => {
  const seen = new Map<string, string>()
  const field = (kind: string, key: string, column: unknown): void => {
    checkIdentifier(name, `the ${kind} name`, key)
    if (column !== undefined) checkIdentifier(name, `the column of ${kind} ${JSON.stringify(key)}`, column)
    const other = seen.get(key.toLowerCase())
    if (other !== undefined) {
      throw new Error(`dataset ${JSON.stringify(name)}: ${kind} ${JSON.stringify(key)} has the name of ${other}; field names must differ (ignoring case)`)
    }
    seen.set(key.toLowerCase(), `${kind} ${JSON.stringify(key)}`)
  }
  for (const [key, dimension] of Object.entries(dimensions)) field("dimension", key, dimension.column)
  for (const [key, measure] of Object.entries(measures)) field("measure", key, measure.aggregation === "ratio" ? undefined : measure.column)
  if (seen.size === 0) throw new Error(`dataset ${JSON.stringify(name)}: define at least one dimension or measure`)
}

const checkGuards = (fail: (message: string) => never, config: DatasetConfig<Dimensions, Measures>): void => {
  for (const list of ["roles", "scopes"] as const) {
    const names: unknown = config[list]
    if (names !== undefined && !(Array.isArray(names) && names.every((n) => typeof n === "string" && n.length > 0))) {
      fail(`${list} must be a list of non-empty names`)
    }
  }
  const ttl: unknown = config.cacheTtlMs
  if (ttl !== undefined && !(typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0)) fail(`cacheTtlMs must be a number of milliseconds ≥ 0, not ${describe(ttl)}`)
  if (config.allowUnscoped !== undefined && typeof config.allowUnscoped !== "function") {
    fail("allowUnscoped must be a function of the caller returning true or false")
  }
}

/** Defines a dataset; every mistake in the model is thrown here, with what to change. */
export const dataset = <const Name extends string, const D extends Dimensions, const M extends Measures>(
  name: Name,
  config: DatasetConfig<D, M>
): Dataset<Name, D, M> => {
  if (!isPlainIdentifier(name)) checkIdentifier(String(name), "the dataset name", name)
  const fail = (message: string): never => {
    throw new Error(`dataset ${JSON.stringify(name)}: ${message}`)
  }
  if (!isRecord(config)) fail("the second argument must be the dataset's config object")
  if (typeof config.source !== "string") fail("source must name a table or view")
  config.source.split(".").forEach((part) => checkIdentifier(name, "each part of source", part))
  if (config.source.split(".").length > 2) fail(`source must be "table" or "schema.table", not ${JSON.stringify(config.source)}`)
  if (config.tenantKey !== undefined) checkIdentifier(name, "tenantKey", config.tenantKey)
  if (config.description !== undefined && typeof config.description !== "string") fail("description must be text")
  checkDimensions(fail, config.dimensions)
  checkMeasures(fail, config.measures)
  checkNames(name, config.dimensions, config.measures)
  checkGuards(fail, config)
  const model: Dataset<Name, D, M> = {
    name,
    source: config.source,
    tenantKey: config.tenantKey,
    description: config.description,
    dimensions: config.dimensions,
    measures: config.measures,
    roles: config.roles ?? [],
    scopes: config.scopes ?? [],
    cacheTtlMs: config.cacheTtlMs,
    allowUnscoped: config.allowUnscoped,
    toSql: (query, { dialect, tenantId, auth }) => {
      const checked = Either.getOrThrowWith(checkDatasetQuery(model, query), identity)
      const scope = Either.getOrThrowWith(datasetScope(model, tenantId, auth ?? null), identity)
      return compileDatasetQuery(model, checked, scope, dialect)
    }
  }
  return model
}
