import type { CompressedBodies } from "../domain/http.js"
import type { MaybePromise } from "../domain/maybePromise.js"

/**
 * A result as the cache keeps it: the JSON text of the handler's encoded result. A JSON answer
 * sends the text as is; CSV and NDJSON answers are shaped from it, so every representation of an
 * entry is made from the same data.
 */
export class StoredResult {
  /** The strong ETag of `json`, computed by the first answer that needs it. */
  etag: MaybePromise<string> | undefined = undefined
  /**
   * `json` compressed (br, gzip), made by the adapter that first sends the entry compressed: later
   * hits send those bytes instead of compressing the same text again. Kept while the entry is; the
   * memory store counts them in its `maxBytes` as they are made (told through `ON_KEPT`).
   */
  readonly compressed: CompressedBodies = {}

  /**
   * @param expiresAt When the entry expires (ms since the epoch), as the run that stored it set its
   * TTL: a hit answers `Cache-Control` for what is left. A store gives it back with the entry;
   * undefined when unknown (a hit then answers with the request's TTL).
   */
  constructor(readonly json: string, readonly expiresAt?: number) {}

  /** A fresh value on each call, so nothing one request does to it reaches another. */
  parse(): unknown {
    return JSON.parse(this.json)
  }
}

/** Where an entry belongs: its endpoint and, for tenant-scoped entries, its tenant. */
export interface ResultCacheKey {
  /** Endpoint, scope and input in one string; holds no `*`, `?`, `[` or `]`, so it is safe in a Redis pattern. */
  readonly id: string
  /** The endpoint's key. */
  readonly endpoint: string
  /** Set for entries scoped to a tenant. */
  readonly tenantId: string | undefined
}

