import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { ServeAuthContext } from "../domain/config.js"
import { Forbidden } from "../domain/errors.js"
import { type TenantPlan, tenantIdOf } from "../tenancy/tenantPlan.js"
import { scopeTableSources } from "../tenancy/autoInject.js"

export interface TenantServiceShape {
  /**
   * The caller's tenant id, or null when the endpoint lets this caller through without one
   * (`required: false`, and `allowUnscoped` says yes when given); otherwise throws 403 `missing_tenant`.
   */
  resolve(tenant: TenantPlan, auth: ServeAuthContext | null): string | null
  /**
   * For auto-inject: the ctx values with every table source wrapped so each builder its `table(name)`
   * returns is filtered with `.where(column, 'eq', tenantId)`. Throws (a 500) rather than let a
   * request run unfiltered: no table source among the values, or one hidden in a promise or anywhere
   * inside another value. `endpoint` names the endpoint in the logged refusal.
   */
  scope(
    values: Readonly<Record<string, unknown>>,
    tenant: TenantPlan,
    tenantId: string,
    endpoint: string
  ): Readonly<Record<string, unknown>>
}

const missingTenant = (): Forbidden => new Forbidden({ message: "A tenant is required for this endpoint", reason: "missing_tenant" })

export const tenantIsolation: TenantServiceShape = {
  resolve: (tenant, auth) => {
    const tenantId = tenantIdOf(tenant.extract(auth))
    if (tenantId !== null) return tenantId
    // Unscoped access only when configured, and only for callers `allowUnscoped` names (anything but `true` is no).
    if (!tenant.required && (tenant.allowUnscoped === undefined || tenant.allowUnscoped(auth) === true)) return null
    throw missingTenant()
  },
  scope: (values, tenant, tenantId, endpoint) => scopeTableSources(endpoint, values, tenant.column, tenantId)
}

export class TenantService extends Context.Tag("queryserve/TenantService")<TenantService, TenantServiceShape>() {
  static readonly layer: Layer.Layer<TenantService> = Layer.succeed(TenantService, tenantIsolation)
}

/** @deprecated Renamed `TenantService`; this alias goes in the next minor version. */
export const TenantIsolation = TenantService
/** @deprecated Renamed `TenantService`; this alias goes in the next minor version. */
export type TenantIsolation = TenantService
/** @deprecated Renamed `TenantServiceShape`; this alias goes in the next minor version. */
export type TenantIsolationService = TenantServiceShape
