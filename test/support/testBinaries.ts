import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** Where `npm run test:binaries` installs the test-only runtimes and engines (see scripts/fetch-test-binaries.mjs). */
export const TEST_BINARIES = fileURLToPath(new URL("../../.cache/test-binaries/node_modules/", import.meta.url))

/** The stable miniflare and the workerd it pins, installed apart from the newest workerd (same script). */
export const STABLE_MINIFLARE_BINARIES = fileURLToPath(new URL("../../.cache/test-binaries/stable-miniflare/node_modules/", import.meta.url))

/** Prints why a suite skips and returns undefined; in CI (`CI=true`) throws instead: CI must run every suite. */
export const missing = (reason: string): undefined => {
  if (process.env.CI === "true") throw new Error(`${reason}. CI must run this suite.`)
  console.log(`[skip] ${reason}`)
  return undefined
}

/**
 * The path of a file inside a cached test package, e.g. `@oven/bun-linux-x64/bin/bun`, under `root`
 * (TEST_BINARIES unless given). Missing, it is undefined and the reason is printed, so the suite can
 * skip; in CI (`CI=true`) a missing one fails.
 */
export const findTestBinary = (label: string, relativePath: string, root: string = TEST_BINARIES): string | undefined => {
  const path = join(root, relativePath)
  if (existsSync(path)) return path
  return missing(`${label} is not installed (${relativePath}): run \`npm run test:binaries\` once to fetch it`)
}
