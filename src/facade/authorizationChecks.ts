import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import { Forbidden, Unauthorized } from "../domain/errors.js"
import { assertAllScopes, assertAnyRole } from "../stages/guards.js"

/**
 * @hypequery/serve's authorization checks as values instead of throws, for code that decides for
 * itself what a refusal does. `missing` names every required role or scope, not only those the
 * caller lacks, as hypequery's does.
 */
export type AuthorizationResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly missing: ReadonlyArray<string>; readonly reason: "MISSING_ROLE" | "MISSING_SCOPE" }

/** Runs one of the guards the pipeline runs, turning its refusal (no caller, or not enough) into a result. */
const asResult = (
  required: ReadonlyArray<string>,
  reason: "MISSING_ROLE" | "MISSING_SCOPE",
  guard: () => void
): AuthorizationResult => {
  if (required.length === 0) return { ok: true }
  try {
    guard()
    return { ok: true }
  } catch (error) {
    if (error instanceof Forbidden || error instanceof Unauthorized) return { ok: false, missing: required, reason }
    throw error
  }
}

/** Whether the caller holds at least one of `requiredRoles` (none required: always). */
export const checkRoleAuthorization = (auth: ServeAuthContext | null, requiredRoles: ReadonlyArray<string>): AuthorizationResult =>
  asResult(requiredRoles, "MISSING_ROLE", () => assertAnyRole(auth, requiredRoles))

/** Whether the caller holds every one of `requiredScopes` (none required: always). */
export const checkScopeAuthorization = (auth: ServeAuthContext | null, requiredScopes: ReadonlyArray<string>): AuthorizationResult =>
  asResult(requiredScopes, "MISSING_SCOPE", () => assertAllScopes(auth, requiredScopes))

/** A caller whose roles and scopes are drawn from the given names. */
export interface TypedAuthContext<TRoles extends string, TScopes extends string> extends ServeAuthContext {
  readonly roles?: ReadonlyArray<TRoles>
  readonly scopes?: ReadonlyArray<TScopes>
}

export interface CreateAuthSystemOptions<TRoles extends string, TScopes extends string> {
  readonly roles?: ReadonlyArray<TRoles>
  readonly scopes?: ReadonlyArray<TScopes>
}

/**
 * hypequery's typed auth helper, kept so code using it runs: it checks nothing at run time.
 * `TypedAuth` is there for `typeof TypedAuth` (an empty caller); `useAuth` returns the strategy it is given.
 */
export const createAuthSystem = <TRoles extends string = string, TScopes extends string = string>(
  _options?: CreateAuthSystemOptions<TRoles, TScopes>
): {
  readonly useAuth: <TAuth extends ServeAuthContext>(strategy: AuthStrategy<TAuth>) => AuthStrategy<TAuth>
  readonly TypedAuth: TypedAuthContext<TRoles, TScopes>
} => ({ useAuth: (strategy) => strategy, TypedAuth: {} })
