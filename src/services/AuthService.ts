import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { AuthStrategy, EndpointInfo, ServeAuthContext } from "../domain/config.js"
import { isServeError } from "../domain/errors.js"
import type { ServeRequest } from "../domain/http.js"
import { type MaybePromise, isPromiseLike } from "../domain/maybePromise.js"

export interface AuthServiceShape {
  /**
   * Runs `strategies` in order; the first non-null caller wins. Resolves null when none found
   * credentials (the guards decide whether that is allowed). A strategy refuses credentials by
   * throwing a ServeError (`Unauthorized`, as `apiKeyAuth` does); anything else it throws is a bug
   * in it, passed on like a handler's: a 500 that is logged and given to `onError`.
   */
  authenticate(
    strategies: ReadonlyArray<AuthStrategy>,
    request: ServeRequest,
    endpoint: EndpointInfo
  ): MaybePromise<ServeAuthContext | null>
}

const reported = new Set<string>()

/**
 * What a strategy threw, passed on. A ServeError is its verdict on the credentials; anything else is
 * a bug in it, which becomes a 500 like a handler's and is logged here the first time each message is
 * seen (a broken strategy fails every request, and must not flood the log).
 */
const strategyFailed = (error: unknown): never => {
  if (!isServeError(error)) {
    const message = error instanceof Error ? error.message : String(error)
    if (!reported.has(message) && reported.size < 100) {
      reported.add(message)
      console.error("[queryserve] an auth strategy threw; the request is answered 500 (logged once per message)", error)
    }
  }
  throw error
}

/**
 * A strategy's answer as a caller: only an object is one. JavaScript strategies written as
 * `key === secret && { ... }` answer `false` for a wrong key; `false`, `0`, `""` (or `true`) must not
 * pass for someone authenticated.
 */
const callerOf = (result: unknown): ServeAuthContext | null =>
  typeof result === "object" && result !== null ? (result as ServeAuthContext) : null

const runFrom = (
  strategies: ReadonlyArray<AuthStrategy>,
  index: number,
  args: Parameters<AuthStrategy>[0]
): MaybePromise<ServeAuthContext | null> => {
  for (let i = index; i < strategies.length; i++) {
    let result: MaybePromise<ServeAuthContext | null>
    try {
      result = strategies[i]!(args)
    } catch (error) {
      return strategyFailed(error)
    }
    if (isPromiseLike(result)) {
      const next = i + 1
      return Promise.resolve(result).then((answer) => callerOf(answer) ?? runFrom(strategies, next, args), strategyFailed)
    }
    const caller = callerOf(result)
    if (caller !== null) return caller
  }
  return null
}

export const strategyChain: AuthServiceShape = {
  authenticate: (strategies, request, endpoint) =>
    strategies.length === 0 ? null : runFrom(strategies, 0, { request, endpoint })
}

export class AuthService extends Context.Tag("queryserve/AuthService")<AuthService, AuthServiceShape>() {
  /** Runs the configured strategies in order. */
  static readonly layer: Layer.Layer<AuthService> = Layer.succeed(AuthService, strategyChain)
}

/** @deprecated Renamed `AuthService`; this alias goes in the next minor version. */
export const Authenticator = AuthService
/** @deprecated Renamed `AuthService`; this alias goes in the next minor version. */
export type Authenticator = AuthService
/** @deprecated Renamed `AuthServiceShape`; this alias goes in the next minor version. */
export type AuthenticatorService = AuthServiceShape
