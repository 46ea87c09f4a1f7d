#!/usr/bin/env node
// `npm run build` after tsc wrote the declarations: bundles src/index.ts (the Node entry),
// src/index.web.ts (the web build) and src/react/index.ts (`queryserve/react`) into dist/, dependencies
// left to the package manager, code shared by them in chunks: one build, so the hooks throw the very
// ServeClientError class the other entries export. A few files instead of one per source module: Node
// loads each module of an import separately, and that count is most of what importing a package costs
// at start-up.
//
// Scalar's standalone script, which @effect/platform ships in a module that is not among its package
// exports, becomes a chunk of its own (src/docs/scalarStandalone.ts loads it by file when run from
// source): the package needs no file system for it, and bundlers keep it out of the main chunk.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const require = createRequire(import.meta.url)
const root = fileURLToPath(new URL("..", import.meta.url))

/** The file of @effect/platform that holds Scalar's script: `export const javascript = "..."`. */
export const scalarModuleFile = () =>
  join(dirname(require.resolve("@effect/platform/package.json")), "dist/esm/internal/httpApiScalar.js")

/** Replaces the from-source loader of Scalar's script by the script's module itself. */
export const scalarScriptPlugin = {
  name: "queryserve-scalar-script",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]docs[\\/]scalarStandalone\.ts$/ }, () => ({
      contents: readFileSync(scalarModuleFile(), "utf8"),
      loader: "js"
    }))
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = join(root, "dist")
  // The JavaScript of an earlier build goes; the declarations and tsc's incremental state stay, so
  // that tsc, which runs next, rewrites only what changed.
  const removeJavaScript = (directory) => {
    let entries = []
    try {
      entries = readdirSync(directory)
    } catch {
      return
    }
    for (const name of entries) {
      const path = join(directory, name)
      if (statSync(path).isDirectory()) removeJavaScript(path)
      else if (name.endsWith(".js") || name.endsWith(".js.map")) rmSync(path)
    }
  }
  removeJavaScript(outdir)
  await esbuild.build({
    entryPoints: {
      index: join(root, "src/index.ts"),
      "index.web": join(root, "src/index.web.ts"),
      "react/index": join(root, "src/react/index.ts")
    },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    packages: "external",
    sourcemap: true,
    chunkNames: "chunks/[name]-[hash]",
    plugins: [scalarScriptPlugin],
    logLevel: "warning"
  })
  // Scalar's script is minified third-party code: a 3.6 MB source map of it would map nothing of ours.
  const chunks = join(outdir, "chunks")
  for (const file of readdirSync(chunks).filter((name) => name.startsWith("scalarStandalone-") && name.endsWith(".js"))) {
    rmSync(join(chunks, `${file}.map`))
    const code = readFileSync(join(chunks, file), "utf8")
    writeFileSync(join(chunks, file), code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n"))
  }
}
