import type { RequestContext } from "../stages/context.js"
import { canonicalJson } from "../domain/canonicalJson.js"
import { digest } from "../domain/digest.js"
import { inputSegment, type KnownInput } from "../stages/inputMemo.js"
import type { ResultCacheFilter } from "./ResultCacheStore.js"
import type { ResultCacheKey } from "../stages/storedResult.js"

const SAFE_SEGMENT = /^[A-Za-z0-9_.-]*$/

const percent = (char: string): string => {
  const encoded = encodeURIComponent(char)
  // encodeURIComponent leaves ! ' ( ) * ~ as they are; a key segment must not hold them either.
  return encoded !== char ? encoded : `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`
}

/**
 * `text` with every character but letters, digits, `_`, `.` and `-` percent-encoded: a segment of
 * a key that holds no separator (`:`) and nothing a Redis pattern would read as a wildcard.
 * Different texts always give different segments.
 */
export const keySegment = (text: string): string => (SAFE_SEGMENT.test(text) ? text : text.replace(/[^A-Za-z0-9_.-]/gu, percent))

/**
 * The key of one request's result: `<endpoint>:<scope>:<input>`. The scope keeps callers apart:
 * `t.<tenant>` for a request with a tenant, `p` for a request without a caller, and for an
 * authenticated request without a tenant `a.` and a digest of the caller's auth context.
 */
export const resultCacheKey = (endpoint: string, endpointSegment: string, ctx: RequestContext): ResultCacheKey => {
  return scopedKey(endpoint, endpointSegment, ctx, inputSegment(canonicalJson(ctx.input)))
}

/** Tenants whose keys one remembered input keeps; past that many, it starts over. */
const TENANT_KEYS_MAX = 16

/**
 * The key of one request's result from an input remembered with its key texts (see InputMemo). A
 * tenant's key is kept with the input (the memo is the endpoint's, so only the tenant varies).
 */
export const knownInputKey = (endpoint: string, endpointSegment: string, ctx: RequestContext, known: KnownInput): ResultCacheKey => {
  const tenantId = ctx.tenantId
  if (tenantId === null) return scopedKey(endpoint, endpointSegment, ctx, known.segment)
  let key = known.tenantKeys.get(tenantId)
  if (key === undefined) {
    key = scopedKey(endpoint, endpointSegment, ctx, known.segment)
    if (known.tenantKeys.size >= TENANT_KEYS_MAX) known.tenantKeys.clear()
    known.tenantKeys.set(tenantId, key)
  }
  return key
}

const scopedKey = (endpoint: string, endpointSegment: string, ctx: RequestContext, segment: string): ResultCacheKey => {
  if (ctx.tenantId !== null) {
    return { id: `${endpointSegment}:t.${keySegment(ctx.tenantId)}:${segment}`, endpoint, tenantId: ctx.tenantId }
  }
  if (ctx.auth !== null && ctx.auth !== undefined) {
    return { id: `${endpointSegment}:a.${digest(canonicalJson(ctx.auth))}:${segment}`, endpoint, tenantId: undefined }
  }
  return { id: `${endpointSegment}:p:${segment}`, endpoint, tenantId: undefined }
}

/** A glob over key ids (as Redis SCAN MATCH reads it) that matches exactly the entries of `filter`. */
export const keyPattern = (filter: ResultCacheFilter): string => {
  const endpoint = filter.key === undefined ? "*" : keySegment(filter.key)
  return filter.tenantId === undefined ? `${endpoint}:*` : `${endpoint}:t.${keySegment(filter.tenantId)}:*`
}
