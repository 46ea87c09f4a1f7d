import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { ServeAuthContext, TenantConfig } from "../domain/config.js"
import { Forbidden } from "../domain/errors.js"

export interface TenantIsolationService {
  /** The caller's tenant id; throws 403 `missing_tenant` when required and absent. */
  resolve(config: TenantConfig, auth: ServeAuthContext | null): string | null
  /**
   * For auto-inject: wraps every value exposing `table(name)` so each builder it returns is
   * filtered with `.where(column, 'eq', tenantId)`.
   */
  scope(values: Readonly<Record<string, unknown>>, config: TenantConfig, tenantId: string): Readonly<Record<string, unknown>>
}

interface Filterable {
  where(column: string, operator: "eq", value: string): unknown
}
interface TableSource {
  table(name: string): Filterable
}

const isTableSource = (value: unknown): value is TableSource =>
  typeof value === "object" && value !== null && typeof (value as { table?: unknown }).table === "function"

const scopeSource = (source: TableSource, column: string, tenantId: string): TableSource => {
  // The wrapper inherits every other member of the source, so helpers like `raw` keep working.
  const scoped = Object.create(source) as TableSource
  scoped.table = (name) => source.table(name).where(column, "eq", tenantId) as Filterable
  return scoped
}

export const tenantIsolation: TenantIsolationService = {
  resolve: (config, auth) => {
    const tenantId = config.extract(auth)
    if (tenantId !== null && tenantId !== undefined && tenantId !== "") return tenantId
    if (config.required === false) return null
    throw new Forbidden({ message: "A tenant is required for this endpoint", reason: "missing_tenant" })
  },
  scope: (values, config, tenantId) => {
    const column = config.column ?? "tenant_id"
    const scoped: Record<string, unknown> = {}
    for (const key of Object.keys(values)) {
      const value = values[key]
      scoped[key] = isTableSource(value) ? scopeSource(value, column, tenantId) : value
    }
    return scoped
  }
}

export class TenantIsolation extends Context.Tag("queryserve/TenantIsolation")<TenantIsolation, TenantIsolationService>() {
  static readonly layer: Layer.Layer<TenantIsolation> = Layer.succeed(TenantIsolation, tenantIsolation)
}
