import type { AuthStrategy } from "../domain/config.js"
import type { DocumentedAuthStrategy } from "../openapi/securityScheme.js"

/** The request header a documented strategy reads its credentials from; undefined for a query parameter, null when unknown. */
const credentialHeader = (strategy: AuthStrategy): string | undefined | null => {
  const scheme = (strategy as DocumentedAuthStrategy).securityScheme
  switch (scheme?.type) {
    case "apiKey":
      return scheme.in === "header" ? scheme.name : scheme.in === "cookie" ? "Cookie" : undefined
    case "http":
    case "oauth2":
    case "openIdConnect":
      return "Authorization"
    default:
      return null
  }
}

/**
 * What a browser's own cache must key an answer that depends on the caller by: the headers the
 * endpoint's strategies read credentials from (its `Vary`, "" for none), or null when a strategy does
 * not say (a custom one without `securityScheme`, mutual TLS): such answers are revalidated instead.
 */
export const credentialVary = (strategies: ReadonlyArray<AuthStrategy>): string | null => {
  // Header names are case-insensitive: each once, as first spelled.
  const names = new Map<string, string>()
  for (const strategy of strategies) {
    const header = credentialHeader(strategy)
    if (header === null) return null
    if (header !== undefined && !names.has(header.toLowerCase())) names.set(header.toLowerCase(), header)
  }
  return [...names.values()].join(", ")
}
