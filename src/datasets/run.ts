/** Runs a checked dataset query for a caller with an executor and answers a page of normalised rows. */
import * as Effect from "effect/Effect"
import type { ServeAuthContext } from "../domain/config.js"
import { type Forbidden, type ServeError, toServeError, type ValidationError } from "../domain/errors.js"
import { pageOf } from "../pagination/page.js"
import { compileDatasetQuery } from "./compile.js"
import { type CheckedDatasetQuery, checkDatasetQuery } from "./decode.js"
import type { SqlExecutor } from "./executor.js"
import type { DatasetModel } from "./model.js"
import { type DatasetRowValues, normalizeRows } from "./normalize.js"
import type { DatasetAnswer } from "./query.js"
import { datasetScope } from "./scope.js"

interface RunDatasetOptions {
  readonly executor: SqlExecutor
  /** The caller's tenant, as the API's tenant config extracts it; null or undefined when it has none. */
  readonly tenantId: string | null | undefined
  /** The caller, for the dataset's `allowUnscoped`. */
  readonly auth: ServeAuthContext | null
}

/**
 * Resolves the caller's scope first (Forbidden `missing_tenant` before anything runs), then runs the
 * statement; interrupting the Effect aborts the executor's signal. A failing executor is the usual
 * classification: unreachable database 503, anything else 500.
 */
export const runDatasetQuery = (
  dataset: DatasetModel,
  query: CheckedDatasetQuery,
  { executor, tenantId, auth }: RunDatasetOptions
): Effect.Effect<DatasetAnswer<DatasetRowValues>, Forbidden | ServeError> =>
  Effect.flatMap(
    Effect.suspend(() => datasetScope(dataset, tenantId, auth)),
    (scope) => {
      const statement = compileDatasetQuery(dataset, query, scope, executor.dialect)
      return Effect.tryPromise({ try: (signal) => executor.execute(statement, signal), catch: toServeError }).pipe(
        Effect.flatMap((rows) => Effect.try({ try: () => normalizeRows(query, rows), catch: toServeError })),
        Effect.map((rows) => pageOf(rows, query.limit, query.offset, query.binding))
      )
    }
  )

/**
 * A query body as a request brings it: the caller's scope first (a caller without a tenant learns
 * nothing of the model), then the body checked, then run. Refused bodies run nothing.
 */
export const queryDataset = (
  dataset: DatasetModel,
  body: unknown,
  options: RunDatasetOptions
): Effect.Effect<DatasetAnswer<DatasetRowValues>, ValidationError | Forbidden | ServeError> =>
  Effect.suspend(() => datasetScope(dataset, options.tenantId, options.auth)).pipe(
    Effect.zipRight(Effect.suspend(() => checkDatasetQuery(dataset, body))),
    Effect.flatMap((query) => runDatasetQuery(dataset, query, options))
  )
