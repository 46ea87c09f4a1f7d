import * as Context from "effect/Context"
import { canonicalJson } from "../domain/canonicalJson.js"
import { digest } from "../domain/digest.js"
import { keySegment } from "./cacheKey.js"

/**
 * The name of the API whose entries a shared store keeps: a store that has no `prefix` of its own
 * puts it into its keys, so two APIs on one Redis never read each other's answers. The serve layer
 * provides it to the layers of the configuration; empty (no API known) leaves the keys unnamed.
 */
export class ResultCacheNamespace extends Context.Reference<ResultCacheNamespace>()("queryserve/ResultCacheNamespace", {
  defaultValue: (): string => ""
}) {}

/** What names an API when `resultCache.namespace` does not: what every process of it defines alike. */
interface ApiShape {
  readonly basePath: string
  /** Each endpoint's key and the method of its own route. */
  readonly endpoints: Iterable<readonly [key: string, method: string]>
  readonly title: string | undefined
  readonly version: string | undefined
}

/** Characters of the digest kept: 72 bits, so two APIs of one Redis meet by chance about never. */
const DIGEST_CHARS = 12

/**
 * The namespace of an API: its `resultCache.namespace` as a key segment, else a digest of its
 * shape. The shape holds no handler and no data: two processes of one API agree on it, and two APIs
 * with the same endpoints under the same base path and title get the same one (they must name themselves).
 */
export const apiNamespace = (name: string | undefined, shape: ApiShape): string => {
  if (name !== undefined) return keySegment(name)
  const endpoints = [...shape.endpoints].map(([key, method]) => `${method} ${key}`).sort()
  return digest(canonicalJson({ basePath: shape.basePath, endpoints, title: shape.title ?? null, version: shape.version ?? null }))
    .slice(0, DIGEST_CHARS)
}
