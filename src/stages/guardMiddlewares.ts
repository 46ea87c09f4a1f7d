import type { ServeMiddleware } from "../domain/config.js"
import { assertAllScopes, assertAnyRole, assertAuthenticated } from "./guards.js"

/** The guards as middlewares, for stacks that decide per request: same checks, same errors. */
export const requireAuthMiddleware = (): ServeMiddleware => (ctx, next) => {
  assertAuthenticated(ctx.auth)
  return next()
}

export const requireRoleMiddleware = (...roles: ReadonlyArray<string>): ServeMiddleware => (ctx, next) => {
  assertAnyRole(ctx.auth, roles)
  return next()
}

export const requireScopeMiddleware = (...scopes: ReadonlyArray<string>): ServeMiddleware => (ctx, next) => {
  assertAllScopes(ctx.auth, scopes)
  return next()
}
