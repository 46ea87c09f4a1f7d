import type { ServeAuthContext } from "../domain/config.js"
import { Forbidden, Unauthorized } from "../domain/errors.js"
import { nameList } from "../domain/nameList.js"

/** requireAuth: a caller must have been resolved. */
export const assertAuthenticated = (auth: ServeAuthContext | null): ServeAuthContext => {
  if (auth === null) throw new Unauthorized({ message: "Authentication required", reason: "missing_credentials" })
  return auth
}

/**
 * The names in a caller's `roles` or `scopes`, whatever a strategy put there (see `nameList`). An
 * array is used as it is, with no copy per request: `includes` never matches a non-string entry.
 */
const grantedNames = (granted: unknown): ReadonlyArray<unknown> => (Array.isArray(granted) ? granted : nameList(granted))

/** What a refusal tells of the caller's own names: nothing, unless `security.verboseAuthErrors` is on. */
const actualOf = (granted: ReadonlyArray<unknown>, verbose: boolean | undefined) =>
  verbose === true ? { actual: granted.filter((name): name is string => typeof name === "string") } : {}

/** The caller needs at least one of `roles`. */
export const assertAnyRole = (auth: ServeAuthContext | null, roles: ReadonlyArray<string>, verbose?: boolean): void => {
  // A string's own `includes` would match substrings: `"nonadmin"` would grant `admin`.
  const granted = grantedNames(assertAuthenticated(auth).roles)
  if (!roles.some((role) => granted.includes(role))) {
    throw new Forbidden({ message: `Requires one of the roles: ${roles.join(", ")}`, reason: "missing_role", required: roles, ...actualOf(granted, verbose) })
  }
}

/** The caller needs every one of `scopes`. */
export const assertAllScopes = (auth: ServeAuthContext | null, scopes: ReadonlyArray<string>, verbose?: boolean): void => {
  const granted = grantedNames(assertAuthenticated(auth).scopes)
  if (!scopes.every((scope) => granted.includes(scope))) {
    throw new Forbidden({ message: `Requires the scopes: ${scopes.join(", ")}`, reason: "missing_scope", required: scopes, ...actualOf(granted, verbose) })
  }
}

export interface GuardPlan {
  readonly requiresAuth: boolean
  readonly requiredRoles: ReadonlyArray<string>
  readonly requiredScopes: ReadonlyArray<string>
  /** A 403 also tells the caller its own roles or scopes (`details.actual`). */
  readonly verboseAuthErrors?: boolean
}

/** SPEC order: requireAuth, then roles (OR), then scopes (AND). */
export const runGuards = (plan: GuardPlan, auth: ServeAuthContext | null): void => {
  if (plan.requiresAuth) assertAuthenticated(auth)
  if (plan.requiredRoles.length > 0) assertAnyRole(auth, plan.requiredRoles, plan.verboseAuthErrors)
  if (plan.requiredScopes.length > 0) assertAllScopes(auth, plan.requiredScopes, plan.verboseAuthErrors)
}
