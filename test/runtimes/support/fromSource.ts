import { fileURLToPath } from "node:url"
import type * as esbuild from "esbuild"
import { scalarScriptPlugin } from "../../../scripts/build.mjs"

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url))

/**
 * Bundles queryserve from its sources as `npm run build` does: `queryserve` is the web entry
 * (src/index.web.ts; which conditions lead there is checked by entries.test.ts), and the docs script
 * module is the script itself, as in dist/.
 */
export const queryserveFromSource = (entry: "index.web.ts" | "index.ts" = "index.web.ts"): esbuild.Plugin => ({
  name: "queryserve-from-source",
  setup(build) {
    build.onResolve({ filter: /^queryserve$/ }, () => ({ path: `${SRC}${entry}` }))
    scalarScriptPlugin.setup(build)
  }
})
