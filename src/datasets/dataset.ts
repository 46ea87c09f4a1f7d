/**
 * `dataset(name, config)`: a governed model of one table or view. Callers pick its dimensions,
 * measures and filters; everything that reaches SQL comes from the model, checked here once.
 */
import * as Either from "effect/Either"
import { identity } from "effect/Function"
import type { ServeAuthContext } from "../domain/config.js"
import { compileDatasetQuery } from "./compile.js"
import { checkDatasetQuery } from "./decode.js"
import type { SqlDialect, SqlStatement } from "./executor.js"
import type { DatasetConfig, DatasetModel, Dimensions, Measures } from "./model.js"
import { checkModel } from "./modelChecks.js"
import type { DatasetField, DatasetQuery } from "./query.js"
import { datasetScope } from "./scope.js"

export interface ToSqlOptions {
  readonly dialect: SqlDialect
  /** The caller's tenant; required on a tenant-keyed dataset unless `allowUnscoped(auth)` is `true`. */
  readonly tenantId?: string | null
  readonly auth?: ServeAuthContext | null
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

/** The checked fields, copied and frozen: changing the config object afterwards cannot put unchecked names into SQL. */
const frozenCopy = <R extends Readonly<Record<string, object>>>(fields: R): R =>
  Object.freeze(Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, Object.freeze({ ...field })]))) as R

/** Defines a dataset; every mistake in the model is thrown here, with what to change. */
export const dataset = <const Name extends string, const D extends Dimensions, const M extends Measures>(
  name: Name,
  config: DatasetConfig<D, M>
): Dataset<Name, D, M> => {
  checkModel(name, config)
  const model: Dataset<Name, D, M> = {
    name,
    source: config.source,
    tenantKey: config.tenantKey,
    description: config.description,
    dimensions: frozenCopy(config.dimensions),
    measures: frozenCopy(config.measures),
    roles: Object.freeze([...(config.roles ?? [])]),
    scopes: Object.freeze([...(config.scopes ?? [])]),
    cacheTtlMs: config.cacheTtlMs,
    allowUnscoped: config.allowUnscoped,
    toSql: (query, { dialect, tenantId, auth }) => {
      // The scope first, as a run checks it: a caller without a tenant learns nothing of the model.
      const scope = Either.getOrThrowWith(datasetScope(model, tenantId, auth ?? null), identity)
      const checked = Either.getOrThrowWith(checkDatasetQuery(model, query), identity)
      return compileDatasetQuery(model, checked, scope, dialect)
    }
  }
  return model
}
