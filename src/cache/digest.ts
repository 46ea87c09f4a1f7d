import { sha256Digest } from "../domain/digest.js"

/**
 * A collision-resistant digest (SHA-256, base64url) of `text`: the part of a cache key that stands
 * for the input and the caller. Every hash the result cache takes goes through here.
 */
export const digest = (text: string): string => sha256Digest().base64url(text)
