import { createHash } from "node:crypto"
import { type CompressedBodies, getHeader, type ServeRequest, type ServeResponse } from "../domain/http.js"

/** A generated file served as is: its body, its headers and a strong ETag over the body. */
export interface StaticAsset {
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  /** Its compressed forms, made once by the adapter that first needs each. */
  readonly compressed: CompressedBodies
}

export const makeStaticAsset = (body: string, headers: Readonly<Record<string, string>>): StaticAsset => ({
  body,
  headers: { ...headers, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` },
  compressed: {}
})

const matchesETag = (ifNoneMatch: string, etag: string): boolean =>
  ifNoneMatch.split(",").some((candidate) => {
    const tag = candidate.trim()
    return tag === "*" || tag === etag || tag === `W/${etag}`
  })

/** 200 with the asset, or 304 without a body when the client already holds this version. */
export const answerWithAsset = (request: ServeRequest, asset: StaticAsset): ServeResponse => {
  const ifNoneMatch = getHeader(request, "if-none-match")
  if (ifNoneMatch !== undefined && matchesETag(ifNoneMatch, asset.headers.etag!)) {
    const { "content-type": _contentType, ...headers } = asset.headers
    return { status: 304, headers: { ...headers }, body: null }
  }
  return { status: 200, headers: { ...asset.headers }, body: asset.body, compressed: asset.compressed }
}
