import * as Layer from "effect/Layer"
import { ON_KEPT } from "../domain/http.js"
import { type ResultCacheFilter, ResultCacheStore, type ResultCacheStoreService, type ResultCacheStoreStats } from "./ResultCacheStore.js"
import { type ResultCacheKey, type StoredResult } from "../stages/storedResult.js"

export interface MemoryResultCacheStoreOptions {
  /** Most entries held at once (default 10,000). */
  readonly maxEntries?: number
  /** Most bytes the entries take, as counted below (default 64 MiB). */
  readonly maxBytes?: number
}

const DEFAULT_MAX_ENTRIES = 10_000
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024

/** The memory store answers synchronously, so a hit never leaves the synchronous path. */
export interface MemoryResultCacheStore extends ResultCacheStoreService {
  get(key: ResultCacheKey): StoredResult | undefined
  set(key: ResultCacheKey, result: StoredResult, ttlMs: number): void
  invalidate(filter: ResultCacheFilter): number
  stats(): ResultCacheStoreStats
}

interface Entry {
  readonly result: StoredResult
  readonly endpoint: string
  readonly tenantId: string | undefined
  readonly expiresAt: number
  /** Grows as the adapters keep compressed forms of the result. */
  bytes: number
}

/**
 * What an entry costs the process besides the characters of its key and JSON. In the heap: the
 * entry and StoredResult objects, the two strings' headers, the key's concatenation node, the
 * memoized ETag, the holder of its compressed forms, and the Map's slot (counted double: the table
 * keeps up to as many free or deleted slots as live ones between rehashes): about 450 bytes on
 * Node 20, heap after a full GC. An evicting store also leaves free space between those small
 * objects in V8's old-generation pages, which RSS keeps: 600-850 bytes per entry besides its texts
 * in all, measured with results of 170 to 900 characters, whatever their length (with 10 KiB results
 * RSS grew 1.04x the count). Counting 700 makes `maxBytes` bound what the store adds to the
 * process's memory, not only its live heap.
 */
const ENTRY_OVERHEAD = 700

/** What a kept compressed form costs besides its bytes: its Uint8Array and ArrayBuffer objects and their allocation. */
const COMPRESSED_OVERHEAD = 200

/** Bytes V8 holds a string in: one per character, two when any is outside Latin-1. */
const stringBytes = (text: string): number => (/[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length)

/**
 * Least recently used entries in one process, bounded by count and by bytes. The Map keeps its
 * entries in the order they were last used (a hit moves its entry to the back), so the front is
 * what goes first; an expired entry is dropped when it is read, counted or pushed out.
 */
class LruResults implements MemoryResultCacheStore {
  private readonly entries = new Map<string, Entry>()
  private bytes = 0
  /** The id at the back of the Map (the entry used last), while known. */
  private newest: string | undefined = undefined

  constructor(private readonly maxEntries: number, private readonly maxBytes: number) {}

  get(key: ResultCacheKey): StoredResult | undefined {
    const entry = this.entries.get(key.id)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= Date.now()) {
      this.drop(key.id, entry)
      return undefined
    }
    // A run of hits on one entry moves it once.
    if (key.id !== this.newest) {
      this.entries.delete(key.id)
      this.entries.set(key.id, entry)
      this.newest = key.id
    }
    return entry.result
  }

  set(key: ResultCacheKey, result: StoredResult, ttlMs: number): void {
    const bytes = ENTRY_OVERHEAD + stringBytes(key.id) + stringBytes(result.json)
    const previous = this.entries.get(key.id)
    if (previous !== undefined) this.drop(key.id, previous)
    // An entry larger than the whole store would only push everything else out.
    if (bytes > this.maxBytes) return
    this.entries.set(key.id, { result, endpoint: key.endpoint, tenantId: key.tenantId, expiresAt: Date.now() + ttlMs, bytes })
    this.newest = key.id
    this.bytes += bytes
    result.compressed[ON_KEPT] = (kept) => this.grow(key.id, result, COMPRESSED_OVERHEAD + kept)
    this.evictOverflow()
  }

  invalidate(filter: ResultCacheFilter): number {
    let dropped = 0
    for (const [id, entry] of this.entries) {
      if (filter.key !== undefined && entry.endpoint !== filter.key) continue
      if (filter.tenantId !== undefined && entry.tenantId !== filter.tenantId) continue
      this.drop(id, entry)
      dropped++
    }
    return dropped
  }

  stats(): ResultCacheStoreStats {
    const now = Date.now()
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.drop(id, entry)
    return { entries: this.entries.size, bytes: this.bytes }
  }

  /** Counts a compressed form kept with an entry still held (one replaced or dropped since counts for nothing). */
  private grow(id: string, result: StoredResult, bytes: number): void {
    const entry = this.entries.get(id)
    if (entry?.result !== result) return
    entry.bytes += bytes
    this.bytes += bytes
    this.evictOverflow()
  }

  /** Drops the least recently used entries until the store is within both bounds. */
  private evictOverflow(): void {
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break
      this.drop(id, entry)
    }
  }

  private drop(id: string, entry: Entry): void {
    this.entries.delete(id)
    if (id === this.newest) this.newest = undefined
    this.bytes -= entry.bytes
  }
}

export const makeMemoryResultCacheStore = (options: MemoryResultCacheStoreOptions = {}): MemoryResultCacheStore =>
  new LruResults(options.maxEntries ?? DEFAULT_MAX_ENTRIES, options.maxBytes ?? DEFAULT_MAX_BYTES)

/** The default ResultCacheStore: an LRU in this process. */
export const memoryResultCacheStore = (options?: MemoryResultCacheStoreOptions): Layer.Layer<ResultCacheStore> =>
  Layer.sync(ResultCacheStore, () => makeMemoryResultCacheStore(options))
