import { createHash } from "node:crypto"
import type { EndpointPlan } from "./plan.js"

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

/** A strong validator: the same bytes always give the same tag, different bytes (practically) never. */
export const strongEtag = (body: string): string => `"${createHash("sha1").update(body).digest("base64url")}"`

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
export const ifNoneMatchHits = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  if (header.trim() === "*") return true
  for (const candidate of header.split(",")) {
    const tag = candidate.trim()
    if ((tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true
  }
  return false
}
