import { type MaybePromise } from "../domain/maybePromise.js"
import { sha256Digest } from "../domain/digest.js"
import { base64url } from "../domain/sha256.js"
import type { EndpointPlan } from "./plan.js"

/**
 * `private` when the answer depends on who asks (auth or tenant), `public` otherwise; 0 means
 * `no-store`; null means no header. A private answer whose credentials cannot be named in `Vary`
 * is `no-cache`: a browser would otherwise give it to whoever signs in next on that browser.
 */
export const cacheControl = (plan: EndpointPlan, ttlMs: number | null): string | undefined => {
  if (ttlMs === null) return undefined
  if (ttlMs <= 0) return "no-store"
  if (!(plan.requiresAuth || plan.tenant !== undefined)) return `public, max-age=${Math.floor(ttlMs / 1000)}`
  return plan.credentialVary === null ? "private, no-cache" : `private, max-age=${Math.floor(ttlMs / 1000)}`
}

/**
 * Without a native SHA-256 (the web build), bodies up to this many UTF-16 units are hashed
 * synchronously in TypeScript, so the answer stays on the synchronous path; longer ones by Web Crypto,
 * natively. Both compute the same SHA-256, so a body has one tag whichever way it went.
 */
const SYNC_DIGEST_LIMIT = 16 * 1024

const encoder = new TextEncoder()

/** `"…"` around the first 160 bits of the digest, base64url (27 characters). */
const quoted = (digest: string): string => `"${digest.slice(0, 27)}"`

/**
 * A strong validator: SHA-256 of the body's UTF-8 bytes, so the same bytes always give the same tag
 * and different bytes (practically) never, on every runtime.
 */
export const strongEtag = (body: string): MaybePromise<string> => {
  const hash = sha256Digest()
  if (hash.native || body.length <= SYNC_DIGEST_LIMIT) return quoted(hash.base64url(body))
  return crypto.subtle.digest("SHA-256", encoder.encode(body)).then((digest) => quoted(base64url(new Uint8Array(digest))))
}

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
