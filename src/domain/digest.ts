import { base64url, sha256 } from "./sha256.js"

/**
 * SHA-256 as the runtime does it best. Every hash queryserve takes (ETags, result cache keys) goes
 * through here, and gives the same digest whichever implementation runs.
 */
export interface Sha256 {
  /** The digest of the UTF-8 bytes of `text`, unpadded base64url. */
  readonly base64url: (text: string) => string
  /** Native code, fast for long texts too: no need to hand long ones to Web Crypto. */
  readonly native: boolean
}

/** The TypeScript SHA-256: what the web build uses; the Node entry provides node:crypto's. */
const portable: Sha256 = { base64url: (text) => base64url(sha256(text)), native: false }

let current: Sha256 = portable

/** Called once by the Node entry with node:crypto's SHA-256. */
export const provideSha256 = (implementation: Sha256): void => {
  current = implementation
}

export const sha256Digest = (): Sha256 => current

/**
 * A collision-resistant digest (SHA-256, base64url) of `text`: the part of a cache key that stands
 * for the input and the caller. Every hash the result cache takes goes through here.
 */
export const digest = (text: string): string => sha256Digest().base64url(text)
