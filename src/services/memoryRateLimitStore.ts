import * as Layer from "effect/Layer"
import { RateLimitStore } from "./RateLimitStore.js"
import type { WindowCount, WindowCountingStore } from "./windowCount.js"

export interface MemoryRateLimitStoreOptions {
  /**
   * Most keys held at once (default 100,000). When full, the key whose window started first is
   * dropped, so a flood of distinct keys costs bounded memory.
   */
  readonly maxKeys?: number
}

interface Window {
  count: number
  readonly expiresAt: number
}

const DEFAULT_MAX_KEYS = 100_000

/**
 * Fixed-window counters in one process. Windows live in a Map in the order they started, so
 * expired ones sit at its front: each new window first sweeps them from there, with no timer.
 * It answers synchronously, so limited requests stay on the synchronous path.
 */
export class MemoryRateLimitStore implements WindowCountingStore {
  private readonly windows = new Map<string, Window>()
  private readonly maxKeys: number

  /**
   * `new MemoryRateLimitStore()` or `new MemoryRateLimitStore({ maxKeys })`. A number (the cleanup
   * interval @hypequery/serve's store takes) is accepted and changes nothing: there is no timer.
   */
  constructor(options: MemoryRateLimitStoreOptions | number = {}) {
    this.maxKeys = (typeof options === "number" ? undefined : options.maxKeys) ?? DEFAULT_MAX_KEYS
  }

  increment(key: string, windowMs: number): number {
    return this.add(key, 1, windowMs)
  }

  hit(key: string, windowMs: number): WindowCount {
    const count = this.add(key, 1, windowMs)
    return { count, ttlMs: this.getTtl(key) }
  }

  /** The count of the key's current window, 0 when there is none. */
  count(key: string): number {
    const window = this.windows.get(key)
    return window !== undefined && window.expiresAt > Date.now() ? window.count : 0
  }

  /**
   * Takes in what another store reported for `key` (a shared store's count and the milliseconds its
   * window has left): the key's count becomes at least `count`.
   */
  observe(key: string, count: number, ttlMs: number): void {
    if (ttlMs > 0 && count > this.count(key)) this.add(key, count - this.count(key), ttlMs)
  }

  getTtl(key: string): number {
    const window = this.windows.get(key)
    return window === undefined ? 0 : Math.max(0, window.expiresAt - Date.now())
  }

  reset(key: string): void {
    this.windows.delete(key)
  }

  /**
   * Forgets every window (as @hypequery/serve's `destroy()`). There is no timer to stop: expired
   * windows are swept as new ones start. The store stays usable and counts from zero.
   */
  destroy(): void {
    this.windows.clear()
  }

  /** Adds `amount` to the key's window, starting one of `windowMs` when there is none; returns the count. */
  private add(key: string, amount: number, windowMs: number): number {
    const now = Date.now()
    const current = this.windows.get(key)
    if (current !== undefined && current.expiresAt > now) return (current.count += amount)
    // A renewed window moves to the back of the Map, keeping it in start order.
    if (current !== undefined) this.windows.delete(key)
    this.sweep(now)
    this.windows.set(key, { count: amount, expiresAt: now + windowMs })
    return amount
  }

  /** Drops expired windows from the front, then the oldest ones while the store is full. */
  private sweep(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.expiresAt > now && this.windows.size < this.maxKeys) break
      this.windows.delete(key)
    }
  }
}

export const makeMemoryRateLimitStore = (options: MemoryRateLimitStoreOptions = {}): MemoryRateLimitStore =>
  new MemoryRateLimitStore(options)

/** A RateLimitStore for one process. */
export const memoryRateLimitStoreLayer = (options?: MemoryRateLimitStoreOptions): Layer.Layer<RateLimitStore> =>
  Layer.sync(RateLimitStore, () => makeMemoryRateLimitStore(options))
