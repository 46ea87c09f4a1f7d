#!/usr/bin/env node
// Part of `npm run build`: writes dist/docs/scalarStandalone.js as a copy of the module in which
// @effect/platform ships Scalar's standalone script (`export const javascript = "..."`). From source,
// src/docs/scalarStandalone.ts loads that module by file; the built package carries it as a module of
// its own, which needs no file system and which bundlers split into a chunk loaded on first use.
import { copyFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const require = createRequire(import.meta.url)

/** The file of @effect/platform that holds Scalar's script (not among its package exports). */
export const scalarModuleFile = () =>
  join(dirname(require.resolve("@effect/platform/package.json")), "dist/esm/internal/httpApiScalar.js")

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL("../dist/docs/scalarStandalone.js", import.meta.url))
  copyFileSync(scalarModuleFile(), target)
  // The source map tsc wrote describes the from-source module, not this copy.
  rmSync(`${target}.map`, { force: true })
  console.log(`[docs-asset] ${target}`)
}
