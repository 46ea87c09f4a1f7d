/**
 * Bundles a Worker with esbuild, as for Cloudflare Workers (no wrangler needed):
 * `npx tsx examples/worker/build.ts [outdir]` after `npm run build`, into examples/worker/dist by default.
 *
 * - ESM for workerd, with queryserve's web build: the `workerd`, `worker` and `browser` export
 *   conditions, platform `browser`, so no `node:` module is reached (`nodejs_compat` is not needed).
 * - Code splitting: what queryserve loads only when used (Scalar's script for the docs page, jose for
 *   jwtAuth, @effect/platform for toHttpApp) becomes chunks of their own that workerd imports on
 *   first use, so starting the Worker parses only the entry and its static chunks.
 * Upload every file of the output directory as a module (wrangler: `no_bundle = true` with a
 * `rules = [{ type = "ESModule", globs = ["**\/*.js"] }]`).
 */
import { gzipSync } from "node:zlib"
import { readFileSync, rmSync } from "node:fs"
import { basename, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

export interface BundleOptions {
  /** Where the files go; emptied first. */
  readonly outdir: string
  /** Default: this directory's worker.ts. */
  readonly entryPoint?: string
  /** Export conditions besides `import`; default `workerd`, `worker`, `browser`. */
  readonly conditions?: ReadonlyArray<string>
  readonly plugins?: ReadonlyArray<esbuild.Plugin>
}

export interface WorkerBundle {
  readonly outdir: string
  /** The entry module, relative to outdir. */
  readonly entry: string
  /** Every module of the bundle, relative to outdir, the entry first. */
  readonly files: ReadonlyArray<string>
  /** The entry and the chunks it imports statically: what workerd parses when the Worker starts. */
  readonly startup: ReadonlyArray<string>
  readonly startupBytes: number
  readonly startupGzipBytes: number
  /** Every module, the lazily imported chunks included. */
  readonly totalBytes: number
  /** The chunk holding Scalar's script, loaded by the first request for the docs page. */
  readonly docsChunkBytes: number
}

const here = fileURLToPath(new URL(".", import.meta.url))

export const bundleWorker = async (options: BundleOptions): Promise<WorkerBundle> => {
  rmSync(options.outdir, { recursive: true, force: true })
  const entryPoint = resolve(options.entryPoint ?? join(here, "worker.ts"))
  const result = await esbuild.build({
    entryPoints: [entryPoint],
    outdir: options.outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: [...(options.conditions ?? ["workerd", "worker", "browser"])],
    minify: true,
    metafile: true,
    write: true,
    // The repository's tsconfig maps `queryserve` to its sources for its own tests; a Worker resolves
    // the package like any dependency (through package.json `exports`).
    tsconfigRaw: {},
    plugins: [...(options.plugins ?? [])],
    logLevel: "warning"
  })
  const outputs = result.metafile.outputs
  const rel = (path: string): string => relative(options.outdir, path)
  // Chunks loaded by a dynamic import are entry points too: the entry is the one built from entryPoint.
  const entryPath = Object.keys(outputs).find((path) => {
    const input = outputs[path]!.entryPoint
    return input !== undefined && resolve(input) === entryPoint
  })!
  const startup = new Set<string>()
  const visit = (path: string): void => {
    if (startup.has(path)) return
    startup.add(path)
    for (const imported of outputs[path]!.imports) if (imported.kind === "import-statement" && !imported.external) visit(imported.path)
  }
  visit(entryPath)
  const bytes = (path: string): number => outputs[path]!.bytes
  const docsChunk = Object.keys(outputs).find((path) => basename(path).startsWith("scalarStandalone"))
  return {
    outdir: options.outdir,
    entry: rel(entryPath),
    files: [entryPath, ...Object.keys(outputs).filter((path) => path !== entryPath && path.endsWith(".js"))].map(rel),
    startup: [...startup].map(rel),
    startupBytes: [...startup].reduce((sum, path) => sum + bytes(path), 0),
    startupGzipBytes: [...startup].reduce((sum, path) => sum + gzipSync(readFileSync(path)).length, 0),
    totalBytes: Object.keys(outputs).reduce((sum, path) => sum + bytes(path), 0),
    docsChunkBytes: docsChunk === undefined ? 0 : bytes(docsChunk)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] ?? join(here, "dist")
  const bundle = await bundleWorker({ outdir })
  const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`
  console.log(`${bundle.files.length} modules in ${outdir}; entry ${bundle.entry}`)
  console.log(`at start-up: ${bundle.startup.join(", ")}: ${kib(bundle.startupBytes)} minified, ${kib(bundle.startupGzipBytes)} gzip`)
  console.log(`all modules: ${kib(bundle.totalBytes)} (Scalar's script for the docs page: ${kib(bundle.docsChunkBytes)}, loaded on first use)`)
}
