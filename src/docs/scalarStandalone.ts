/**
 * Scalar's standalone API-reference script, when queryserve runs from its TypeScript sources.
 * @effect/platform ships the script (its HttpApiScalar module inlines it) in a module that is not among
 * its package exports, so here it is loaded by file. The build writes `dist/docs/scalarStandalone.js`
 * as a copy of that module instead (see scripts/docs-asset.mjs): the published package needs no file
 * system for it, and bundles it for a Worker as a chunk of its own.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

const require = createRequire(import.meta.url)
const file = join(dirname(require.resolve("@effect/platform/package.json")), "dist/esm/internal/httpApiScalar.js")
const module = (await import(pathToFileURL(file).href)) as { readonly javascript?: unknown }
if (typeof module.javascript !== "string") {
  throw new Error(`queryserve: Scalar's script was not found in ${file}; is @effect/platform at the pinned version?`)
}

export const javascript: string = module.javascript
