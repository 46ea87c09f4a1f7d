import { type CompressedBodies, getHeader, type ServeRequest, type ServeResponse } from "../domain/http.js"
import { andThen, type MaybePromise } from "../domain/maybePromise.js"
import { ifNoneMatchHits, strongEtag } from "../stages/httpCache.js"

/** A generated file served as is: its body, its headers and a strong ETag over the body. */
export interface StaticAsset {
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  /** Its compressed forms, made once by the adapter that first needs each. */
  readonly compressed: CompressedBodies
}

/** The asset with its ETag; a promise when a large body is digested asynchronously. */
export const makeStaticAsset = (body: string, headers: Readonly<Record<string, string>>): MaybePromise<StaticAsset> =>
  andThen(strongEtag(body), (etag) => ({ body, headers: { ...headers, etag }, compressed: {} }))

/** 200 with the asset, or 304 without a body when the client already holds this version. */
export const answerWithAsset = (request: ServeRequest, asset: StaticAsset): ServeResponse => {
  if (ifNoneMatchHits(getHeader(request, "if-none-match"), asset.headers.etag!)) {
    const { "content-type": _contentType, ...headers } = asset.headers
    return { status: 304, headers: { ...headers }, body: null }
  }
  return { status: 200, headers: { ...asset.headers }, body: asset.body, compressed: asset.compressed }
}
