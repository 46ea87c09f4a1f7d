/**
 * Which rows a query may read. Fails closed: a tenant-keyed dataset answers a caller without a
 * tenant only when its `allowUnscoped(auth)` returns exactly `true`.
 */
import * as Either from "effect/Either"
import type { ServeAuthContext } from "../domain/config.js"
import { Forbidden } from "../domain/errors.js"
import type { DatasetModel } from "./dataset.js"

/** The tenant whose rows a statement reads, or every row (a dataset without a tenant key, or an allowed unscoped caller). */
export type DatasetScope = { readonly _tag: "Tenant"; readonly tenantId: string } | { readonly _tag: "Unscoped" }

const unscoped: DatasetScope = { _tag: "Unscoped" }

export const datasetScope = (
  dataset: DatasetModel,
  tenantId: string | null | undefined,
  auth: ServeAuthContext | null
): Either.Either<DatasetScope, Forbidden> => {
  if (dataset.tenantKey === undefined) return Either.right(unscoped)
  if (typeof tenantId === "string" && tenantId.length > 0) return Either.right({ _tag: "Tenant", tenantId })
  if (dataset.allowUnscoped?.(auth) === true) return Either.right(unscoped)
  return Either.left(
    new Forbidden({ message: `Dataset "${dataset.name}" needs a tenant, and the caller has none`, reason: "missing_tenant" })
  )
}
