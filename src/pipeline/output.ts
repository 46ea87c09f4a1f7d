import type { EndpointPlan } from "./plan.js"

const bigintSafe = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()) : value

/** JSON text of a result; BigInt (common from SQL drivers) becomes a number, or a string when too large. */
export const serializeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (error instanceof TypeError && String(error.message).includes("BigInt")) return JSON.stringify(value, bigintSafe)
    throw error
  }
}

/**
 * `private` when the answer depends on who asks (auth or tenant), `public` otherwise;
 * 0 means `no-store`; null means no header.
 */
export const cacheControl = (plan: EndpointPlan, ttlMs: number | null): string | undefined => {
  if (ttlMs === null) return undefined
  if (ttlMs <= 0) return "no-store"
  const scope = plan.requiresAuth || plan.tenant !== undefined ? "private" : "public"
  return `${scope}, max-age=${Math.floor(ttlMs / 1000)}`
}
