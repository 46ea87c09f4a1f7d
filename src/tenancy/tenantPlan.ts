import type { ServeAuthContext, TenantConfig, TenantMode, TenantOverride } from "../domain/config.js"

/** An endpoint's tenant config after merging, checked once at define time. */
export interface TenantPlan {
  readonly extract: (auth: ServeAuthContext | null) => unknown
  readonly column: string
  readonly mode: TenantMode
  readonly required: boolean
  readonly allowUnscoped: ((auth: ServeAuthContext | null) => boolean) | undefined
}

/** A tenant id is a non-empty string, or a finite number as its string; anything else means no tenant. */
export const tenantIdOf = (value: unknown): string | null => {
  if (typeof value === "string") return value.length > 0 ? value : null
  if (typeof value === "number" && Number.isFinite(value)) return String(value)
  return null
}

const MODES: ReadonlySet<unknown> = new Set<TenantMode>(["manual", "auto-inject"])

/** Reads a field of the query's config, else of the global one (properties may be inherited, as on a class). */
const field = <K extends keyof TenantConfig>(
  own: TenantOverride | undefined,
  global: TenantConfig | undefined,
  name: K
): TenantConfig[K] | undefined => {
  const value = own?.[name]
  return value !== undefined ? value : global?.[name]
}

/** The bound function a config holds under `name`, called with the config it came from as `this`. */
const method = <A extends ReadonlyArray<unknown>, R>(
  own: TenantOverride | undefined,
  global: TenantConfig | undefined,
  name: "extract" | "allowUnscoped"
): ((...args: A) => R) | undefined => {
  const source = own?.[name] !== undefined ? own : global
  const fn: unknown = source?.[name]
  return typeof fn === "function" ? (fn as (...args: A) => R).bind(source) : undefined
}

const warnedManual = new Set<string>()

/**
 * In manual mode the handler itself must filter by `ctx.tenantId`, and nothing checks that it does:
 * said once per query and process, when the query is defined (@hypequery/serve says it on every
 * request). The global config's own check (`where` not naming a query) says nothing, nor does a query
 * whose own tenant config sets `mode: "manual"`.
 */
export const warnManualMode = (where: string): void => {
  if (!where.startsWith("query ") || warnedManual.has(where) || warnedManual.size >= 1_000) return
  warnedManual.add(where)
  console.warn(
    `[queryserve] ${where} uses tenant mode "manual": filter every query it runs by ctx.tenantId yourself, ` +
      `or set tenant.mode to "auto-inject" to have ctx's table sources filtered for you.`
  )
}

function fail(message: string): never {
  throw new Error(`defineServe: ${message}`)
}

/**
 * Merges a query's tenant config over the global one and checks the result; every mistake is thrown
 * here, at define time, with what to change. `where` names the config in messages.
 */
export const compileTenant = (
  where: string,
  own: TenantOverride | undefined,
  global: TenantConfig | undefined
): TenantPlan => {
  const mode = field(own, global, "mode") ?? "manual"
  if (!MODES.has(mode)) fail(`${where}: tenant.mode must be "manual" or "auto-inject", not ${JSON.stringify(mode)}.`)
  const column = field(own, global, "column") ?? "tenant_id"
  if (typeof column !== "string" || column.length === 0) fail(`${where}: tenant.column must be a non-empty column name.`)
  const extract = method<[ServeAuthContext | null], unknown>(own, global, "extract")
  if (extract === undefined) {
    fail(
      own === undefined
        ? `${where} has no extract function. Give it extract, e.g. (auth) => auth?.tenantId.`
        : `${where} has a tenant config without an extract function${global === undefined ? " and there is no global tenant config to inherit one from" : ""}. ` +
          `Give it tenant.extract, e.g. (auth) => auth?.tenantId, or set tenant (with extract) on the ServeConfig for every query.`
    )
  }
  const required = field(own, global, "required") !== false
  const allowUnscopedField = field(own, global, "allowUnscoped")
  if (allowUnscopedField !== undefined && typeof allowUnscopedField !== "function") {
    fail(`${where}: tenant.allowUnscoped must be a function of the caller returning true or false.`)
  }
  const allowUnscoped = method<[ServeAuthContext | null], boolean>(own, global, "allowUnscoped")
  if (mode === "auto-inject" && !required && allowUnscoped === undefined) {
    fail(
      `${where} has tenant { mode: "auto-inject", required: false } without allowUnscoped, so a caller without a tenant ` +
        `would read every tenant's rows. Add allowUnscoped: (auth) => boolean naming who may, e.g. ` +
        `(auth) => auth?.roles?.includes("admin") === true, or remove required: false.`
    )
  }
  // A query whose own tenant config names manual mode has decided so, as the dataset routes (whose SQL carries the tenant) do.
  if (mode === "manual" && own?.mode !== "manual") warnManualMode(where)
  return { extract, column, mode, required, allowUnscoped }
}
