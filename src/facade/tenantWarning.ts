import { warnManualMode } from "../tenancy/tenantPlan.js"

const warnedUnconfigured = new Set<string>()

/**
 * @hypequery/serve's tenant warning, said in queryserve's words and, like queryserve's own
 * manual-mode warning, once per query key and process: a query without tenant config, or one in
 * manual mode whose callers have a tenant (its handler must filter by `ctx.tenantId` itself).
 */
export const warnTenantMisconfiguration = (options: {
  readonly queryKey: string
  readonly hasTenantConfig: boolean
  readonly hasTenantId: boolean
  readonly mode?: string
}): void => {
  const where = `query "${options.queryKey}"`
  if (options.hasTenantConfig) {
    if (options.hasTenantId && options.mode === "manual") warnManualMode(where)
    return
  }
  if (warnedUnconfigured.has(where) || warnedUnconfigured.size >= 1_000) return
  warnedUnconfigured.add(where)
  console.warn(
    `[queryserve] ${where} has no tenant config, so it answers every caller with every tenant's rows; ` +
      `give it tenant (or set tenant on the ServeConfig) if its data belongs to tenants.`
  )
}
