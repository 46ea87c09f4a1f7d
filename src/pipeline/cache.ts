import { type MaybePromise } from "../domain/maybePromise.js"
import { base64url, sha256 } from "../domain/sha256.js"
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

/**
 * Bodies up to this many UTF-16 units are hashed synchronously in JavaScript, so the answer stays on
 * the synchronous path; longer ones by Web Crypto, natively and (on Node) off the event loop. Both
 * compute the same SHA-256, so a body has one tag whichever way it went.
 */
const SYNC_DIGEST_LIMIT = 16 * 1024

const encoder = new TextEncoder()

/** `"…"` around the first 160 bits of the digest, base64url. */
const quotedTag = (digest: Uint8Array): string => `"${base64url(digest).slice(0, 27)}"`

/**
 * A strong validator: SHA-256 of the body's UTF-8 bytes, so the same bytes always give the same tag
 * and different bytes (practically) never, on every runtime.
 */
export const strongEtag = (body: string): MaybePromise<string> =>
  body.length <= SYNC_DIGEST_LIMIT
    ? quotedTag(sha256(body))
    : crypto.subtle.digest("SHA-256", encoder.encode(body)).then((digest) => quotedTag(new Uint8Array(digest)))

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
