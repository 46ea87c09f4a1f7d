/**
 * Vitest config for `npm run test:hypequery` (scripts/hypequery-compat.mjs): runs @hypequery/serve's own
 * test files, copied to .cache/hypequery-compat/ (never committed), against queryserve. Their imports
 * of the package (`@hypequery/serve`, or a relative import of one of its modules, which the copy does
 * not hold) resolve to queryserve's Node entry; imports between the copied files stay as they are.
 */
import { existsSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const repo = fileURLToPath(new URL("..", import.meta.url))
const copies = resolve(repo, ".cache/hypequery-compat")
const entry = resolve(repo, "src/index.ts")

/** The copied file a relative import names, if the copy holds it (`.js` written for `.ts`, or no extension). */
const copiedFile = (path) =>
  [path, path.replace(/\.js$/, ".ts"), `${path}.ts`, resolve(path, "index.ts")].find((candidate) => candidate.endsWith(".ts") && existsSync(candidate))

const packageToQueryserve = {
  name: "hypequery-to-queryserve",
  enforce: "pre",
  resolveId(source, importer) {
    if (source === "@hypequery/serve" || source.startsWith("@hypequery/serve/")) return entry
    if (importer === undefined || !importer.startsWith(copies) || !source.startsWith(".")) return null
    return copiedFile(resolve(dirname(importer), source)) ?? entry
  }
}

export default defineConfig({
  plugins: [packageToQueryserve],
  test: {
    root: repo,
    include: [".cache/hypequery-compat/**/*.test.ts"],
    // Vitest leaves out .cache/ by default; the copies live there so that git ignores them.
    exclude: ["**/node_modules/**"],
    testTimeout: 30_000,
    maxWorkers: 2
  }
})
