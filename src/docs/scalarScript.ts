import { makeStaticAsset, type StaticAsset } from "./staticAsset.js"

const importScript = async (): Promise<StaticAsset> => {
  // A module of its own, imported on first use: a bundler makes it a separate chunk, so a Worker's
  // main module stays small and loads Scalar's 3 MB only when the docs page is asked for.
  const { javascript } = await import("./scalarStandalone.js")
  return makeStaticAsset(javascript, {
    "content-type": "text/javascript; charset=utf-8",
    // The page asks for it with `?v=<its ETag>`, so a new script is a new URL.
    "cache-control": "public, max-age=31536000, immutable"
  })
}

let loading: Promise<StaticAsset> | undefined

/**
 * Scalar's standalone API-reference script (about 3.3 MB) as @effect/platform ships it; loaded on the
 * first request for the docs page or the script, and kept. Served from this process, so the docs page
 * works offline.
 */
export const loadScalarScript = (): Promise<StaticAsset> =>
  (loading ??= importScript().catch((error: unknown) => {
    loading = undefined
    throw error
  }))
