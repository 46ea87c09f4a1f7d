import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { makeStaticAsset, type StaticAsset } from "./staticAsset.js"

const require = createRequire(import.meta.url)
const PLATFORM_PACKAGE = "@effect/platform/package.json"
// @effect/platform's HttpApiScalar inlines Scalar's standalone build from this module; it is not an
// export of the package, so it is loaded by file. The exact @effect/platform version is pinned.
const SCALAR_MODULE = "dist/esm/internal/httpApiScalar.js"

/** The @effect/platform version, which fixes the Scalar build: it versions the script's URL. */
export const scalarScriptVersion = (): string => (require(PLATFORM_PACKAGE) as { readonly version: string }).version

const importScript = async (): Promise<StaticAsset> => {
  const file = join(dirname(require.resolve(PLATFORM_PACKAGE)), SCALAR_MODULE)
  const module = (await import(pathToFileURL(file).href)) as { readonly javascript?: unknown }
  if (typeof module.javascript !== "string") {
    throw new Error(`queryserve: Scalar's script was not found in ${file}; is @effect/platform at the pinned version?`)
  }
  return makeStaticAsset(module.javascript, {
    "content-type": "text/javascript; charset=utf-8",
    // The page asks for it with `?v=<version>`, so a new version is a new URL.
    "cache-control": "public, max-age=31536000, immutable"
  })
}

let loading: Promise<StaticAsset> | undefined

/**
 * Scalar's standalone API-reference script (about 3 MB) as @effect/platform ships it; loaded on the
 * first request for it and kept. Served from this process, so the docs page works offline.
 */
export const loadScalarScript = (): Promise<StaticAsset> =>
  (loading ??= importScript().catch((error: unknown) => {
    loading = undefined
    throw error
  }))
