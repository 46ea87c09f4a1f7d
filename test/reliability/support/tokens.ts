/** Bearer tokens for the demo's added jwtAuth strategy, signed here with jose. */
import { SignJWT } from "jose"
import { JWT_SECRET, TENANT_IDS, type TenantId } from "./targetConfig.js"

export interface Tokens {
  /** A valid analyst token per tenant (`tenant_id` claim). */
  readonly tenant: Readonly<Record<TenantId, string>>
  /** A valid token with the admin role and no tenant. */
  readonly admin: string
  /** Refused tokens: expired, signed with another secret, claiming another tenant with a forged signature, unsigned. */
  readonly refused: ReadonlyArray<string>
}

const sign = (claims: Record<string, unknown>, secret = JWT_SECRET, expiresIn: string | number = "1h"): Promise<string> =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(claims.sub ?? "reliability"))
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret))

const unsigned = (claims: Record<string, unknown>): string => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`
}

export const signTokens = async (): Promise<Tokens> => {
  const tenant = Object.fromEntries(
    await Promise.all(TENANT_IDS.map(async (id) => [id, await sign({ sub: `${id}-analyst`, roles: ["analyst"], tenant_id: id })] as const))
  ) as Record<TenantId, string>
  const admin = await sign({ sub: "platform-admin", roles: ["admin"] })
  const forged = (await sign({ sub: "intruder", roles: ["admin"], tenant_id: "acme" })).slice(0, -4) + "AAAA"
  const refused = [
    await sign({ sub: "late", roles: ["analyst"], tenant_id: "acme" }, JWT_SECRET, Math.floor(Date.now() / 1000) - 60),
    await sign({ sub: "other-issuer", roles: ["admin"], tenant_id: "acme" }, "another-secret-that-is-long-enough!!"),
    forged,
    unsigned({ sub: "none", roles: ["admin"], tenant_id: "acme" })
  ]
  return { tenant, admin, refused }
}
