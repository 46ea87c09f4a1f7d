/**
 * SHA-256 (FIPS 180-4) in plain TypeScript, synchronous. Web Crypto's `digest` is asynchronous, and
 * the hot path (an ETag over every cached answer, a result cache key) must stay
 * synchronous and free of `node:crypto` so it runs on every runtime. For the short texts it sees
 * there it is as fast as node:crypto (no native call, no hash object per call).
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])

const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]

// Scratch state: the function is synchronous, so one set serves every call.
const W = new Int32Array(64)
const H = new Int32Array(8)
const TAIL = new Uint8Array(128)
/** Texts up to this many UTF-16 units are encoded into SCRATCH (3 bytes per unit at most); longer ones get their own buffer. */
const SCRATCH_UNITS = 4096
const SCRATCH = new Uint8Array(SCRATCH_UNITS * 3)
const encoder = new TextEncoder()

const compress = (bytes: Uint8Array, offset: number): void => {
  for (let t = 0; t < 16; t++) {
    const i = offset + t * 4
    W[t] = (bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!
    const w2 = W[t - 2]!
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3)
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10)
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0
  }
  let a = H[0]!, b = H[1]!, c = H[2]!, d = H[3]!, e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  H[0] = (H[0]! + a) | 0
  H[1] = (H[1]! + b) | 0
  H[2] = (H[2]! + c) | 0
  H[3] = (H[3]! + d) | 0
  H[4] = (H[4]! + e) | 0
  H[5] = (H[5]! + f) | 0
  H[6] = (H[6]! + g) | 0
  H[7] = (H[7]! + h) | 0
}

/** SHA-256 of the first `length` bytes of `bytes`. */
const sha256Bytes = (bytes: Uint8Array, length: number = bytes.length): Uint8Array => {
  H.set(INITIAL)
  const whole = length - (length % 64)
  for (let offset = 0; offset < whole; offset += 64) compress(bytes, offset)
  // The last partial block, the 0x80 marker and the bit length: one or two more blocks.
  const rest = length - whole
  const tailLength = rest < 56 ? 64 : 128
  TAIL.fill(0)
  TAIL.set(bytes.subarray(whole, length))
  TAIL[rest] = 0x80
  const bits = length * 8
  const high = Math.floor(bits / 0x100000000)
  for (let i = 0; i < 4; i++) {
    TAIL[tailLength - 8 + i] = (high >>> (24 - 8 * i)) & 0xff
    TAIL[tailLength - 4 + i] = (bits >>> (24 - 8 * i)) & 0xff
  }
  compress(TAIL, 0)
  if (tailLength === 128) compress(TAIL, 64)
  const digest = new Uint8Array(32)
  for (let i = 0; i < 8; i++) {
    const word = H[i]!
    digest[i * 4] = word >>> 24
    digest[i * 4 + 1] = (word >>> 16) & 0xff
    digest[i * 4 + 2] = (word >>> 8) & 0xff
    digest[i * 4 + 3] = word & 0xff
  }
  return digest
}

/** SHA-256 of the UTF-8 bytes of `text`. */
export const sha256 = (text: string): Uint8Array => {
  if (text.length > SCRATCH_UNITS) return sha256Bytes(encoder.encode(text))
  return sha256Bytes(SCRATCH, encoder.encodeInto(text, SCRATCH).written)
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** Unpadded base64url (RFC 4648 §5) of `bytes`. */
export const base64url = (bytes: Uint8Array): string => {
  let text = ""
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    text += BASE64URL[n >>> 18]! + BASE64URL[(n >>> 12) & 63]! + BASE64URL[(n >>> 6) & 63]! + BASE64URL[n & 63]!
  }
  const rest = bytes.length - i
  if (rest > 0) {
    const n = (bytes[i]! << 16) | (rest === 2 ? bytes[i + 1]! << 8 : 0)
    text += BASE64URL[n >>> 18]! + BASE64URL[(n >>> 12) & 63]! + (rest === 2 ? BASE64URL[(n >>> 6) & 63]! : "")
  }
  return text
}
