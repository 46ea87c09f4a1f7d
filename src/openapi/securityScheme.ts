import type { AuthStrategy, ServeAuthContext } from "../domain/config.js"
import { sortByName } from "./sortByName.js"

/** An OpenAPI 3.1 Security Scheme Object: how a strategy expects credentials. */
export type SecurityScheme =
  | {
    readonly type: "apiKey"
    readonly in: "header" | "query" | "cookie"
    readonly name: string
    readonly description?: string
  }
  | { readonly type: "http"; readonly scheme: string; readonly bearerFormat?: string; readonly description?: string }
  | { readonly type: "mutualTLS"; readonly description?: string }
  | { readonly type: "oauth2"; readonly flows: Readonly<Record<string, unknown>>; readonly description?: string }
  | { readonly type: "openIdConnect"; readonly openIdConnectUrl: string; readonly description?: string }

/**
 * The convention by which a strategy documents itself: a `securityScheme` property on the strategy
 * function. `apiKeyAuth` and `jwtAuth` set it; a custom strategy can too, with `withSecurityScheme`.
 */
export type DocumentedAuthStrategy<TAuth extends ServeAuthContext = ServeAuthContext> = AuthStrategy<TAuth> & {
  readonly securityScheme?: SecurityScheme
}

/** A copy of `strategy` that OpenAPI and the docs page show with `securityScheme`. */
export const withSecurityScheme = <TAuth extends ServeAuthContext>(
  strategy: AuthStrategy<TAuth>,
  securityScheme: SecurityScheme
): DocumentedAuthStrategy<TAuth> => Object.assign((args: Parameters<AuthStrategy<TAuth>>[0]) => strategy(args), { securityScheme })

/**
 * What a strategy without a `securityScheme` is documented as: most hand-written strategies read an
 * `Authorization: Bearer` header, and an operation that lists no scheme would read as public.
 */
const UNDOCUMENTED_STRATEGY_SCHEME: SecurityScheme = {
  type: "http",
  scheme: "bearer",
  description: "A custom authentication strategy; see the API's own documentation for the credentials it expects."
}

export const securitySchemeOf = (strategy: AuthStrategy): SecurityScheme =>
  (strategy as DocumentedAuthStrategy).securityScheme ?? UNDOCUMENTED_STRATEGY_SCHEME

const baseName = (scheme: SecurityScheme): string => {
  switch (scheme.type) {
    case "apiKey":
      return "apiKeyAuth"
    case "http":
      return `${scheme.scheme.toLowerCase().replace(/[^a-z0-9]/g, "")}Auth`
    default:
      return scheme.type
  }
}

/**
 * Names the distinct schemes of one document: `bearerAuth`, `apiKeyAuth`, and `apiKeyAuth_2` for a
 * second, different API key scheme, in the order they are first met.
 */
export class SecuritySchemeNames {
  private readonly nameByScheme = new Map<string, string>()
  private readonly schemeByName: Record<string, SecurityScheme> = Object.create(null)

  nameOf(scheme: SecurityScheme): string {
    const text = JSON.stringify(scheme)
    let name = this.nameByScheme.get(text)
    if (name === undefined) {
      const base = baseName(scheme)
      name = base
      for (let n = 2; name in this.schemeByName; n++) name = `${base}_${n}`
      this.nameByScheme.set(text, name)
      this.schemeByName[name] = scheme
    }
    return name
  }

  get size(): number {
    return this.nameByScheme.size
  }

  /** The schemes by name, sorted. */
  toJSON(): Record<string, SecurityScheme> {
    return sortByName(this.schemeByName)
  }
}
