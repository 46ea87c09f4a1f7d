import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type * as esbuild from "esbuild"
import { scalarModuleFile } from "../../../scripts/docs-asset.mjs"

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url))

/**
 * Bundles queryserve from its sources, as the published package would be bundled: `queryserve` is
 * the web entry (src/index.web.ts; which conditions lead there is checked by entries.test.ts), and the
 * docs script module is what `npm run build` writes into dist/ (a copy of @effect/platform's module).
 */
export const queryserveFromSource = (entry: "index.web.ts" | "index.ts" = "index.web.ts"): esbuild.Plugin => ({
  name: "queryserve-from-source",
  setup(build) {
    build.onResolve({ filter: /^queryserve$/ }, () => ({ path: `${SRC}${entry}` }))
    build.onLoad({ filter: /[\\/]src[\\/]docs[\\/]scalarStandalone\.ts$/ }, () => ({
      contents: readFileSync(scalarModuleFile(), "utf8"),
      loader: "js"
    }))
  }
})
