import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import { afterAll, describe, expect, it } from "vitest"
import { queryserveFromSource } from "./support/fromSource.js"

const ROOT = fileURLToPath(new URL("../../", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "queryserve-entries-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Which file of the package `import "queryserve" + subpath` resolves to under these conditions (esbuild's resolver, as bundlers use it). */
const resolveEntry = async (conditions: ReadonlyArray<string>, platform: "node" | "browser" | "neutral", subpath = ""): Promise<string> => {
  // A copy of package.json with an empty file at each target, so the exports map is resolved as published.
  const packageDir = join(scratch, "node_modules", "queryserve")
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: unknown }
  mkdirSync(join(packageDir, "dist"), { recursive: true })
  writeFileSync(join(packageDir, "package.json"), JSON.stringify(manifest))
  for (const file of ["index.js", "index.web.js"]) writeFileSync(join(packageDir, "dist", file), "")
  writeFileSync(join(scratch, "main.js"), `import "queryserve${subpath}"`)
  const result = await esbuild.build({
    entryPoints: [join(scratch, "main.js")],
    bundle: true,
    write: false,
    metafile: true,
    platform,
    conditions: [...conditions],
    mainFields: ["module", "main"],
    logLevel: "silent"
  })
  return Object.keys(result.metafile.inputs).find((input) => input.includes("node_modules/queryserve/"))!.replace(/.*node_modules\/queryserve\//, "")
}

describe("which build each runtime gets", () => {
  it("sends workerd, Workers, Vercel's edge, Deno and browsers to the web build; Node and Bun to the Node entry", async () => {
    expect(await resolveEntry(["workerd", "worker", "browser"], "browser")).toBe("dist/index.web.js")
    expect(await resolveEntry(["edge-light"], "neutral")).toBe("dist/index.web.js")
    expect(await resolveEntry(["deno"], "node")).toBe("dist/index.web.js")
    expect(await resolveEntry([], "browser")).toBe("dist/index.web.js")
    expect(await resolveEntry(["bun"], "node")).toBe("dist/index.js")
    expect(await resolveEntry([], "node")).toBe("dist/index.js")
  })

  it("lets anyone pick a build by subpath", async () => {
    expect(await resolveEntry([], "node", "/web")).toBe("dist/index.web.js")
    expect(await resolveEntry(["workerd", "worker", "browser"], "browser", "/node")).toBe("dist/index.js")
  })
})

interface Graph {
  /** Packages and built-ins an import of the entry loads at once. */
  readonly atImport: ReadonlySet<string>
  /** Those loaded only by a dynamic import, when a feature is used. */
  readonly onUse: ReadonlySet<string>
  /** Source files reached only through a dynamic import. */
  readonly lazySources: ReadonlySet<string>
}

/** The import graph of an entry of src/, dependencies left unbundled: what it loads statically, and what only on use. */
const importGraph = async (entry: string, platform: "node" | "browser"): Promise<Graph> => {
  const outdir = join(scratch, `graph-${entry}`)
  const result = await esbuild.build({
    entryPoints: [join(ROOT, "src", entry)],
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform,
    packages: "external",
    metafile: true,
    write: false,
    tsconfigRaw: {},
    // The docs script module as the build writes it into dist/ (from source it is read by file).
    plugins: [queryserveFromSource()],
    logLevel: "silent"
  })
  const outputs = result.metafile.outputs
  const entryOutput = Object.keys(outputs).find((path) => outputs[path]!.entryPoint !== undefined)!
  const staticOutputs = new Set<string>()
  const visit = (path: string): void => {
    if (staticOutputs.has(path)) return
    staticOutputs.add(path)
    for (const imported of outputs[path]!.imports) if (!imported.external && imported.kind === "import-statement") visit(imported.path)
  }
  visit(entryOutput)
  const atImport = new Set<string>()
  const onUse = new Set<string>()
  const lazySources = new Set<string>()
  for (const [path, output] of Object.entries(outputs)) {
    const loadedAtImport = staticOutputs.has(path)
    if (!loadedAtImport) for (const input of Object.keys(output.inputs)) lazySources.add(input.replace(/.*src\//, "src/"))
    for (const imported of output.imports) {
      if (!imported.external) continue
      if (loadedAtImport && imported.kind === "import-statement") atImport.add(imported.path)
      else onUse.add(imported.path)
    }
  }
  for (const name of atImport) onUse.delete(name)
  return { atImport, onUse, lazySources }
}

describe("what importing queryserve loads", () => {
  it("the Node entry: Effect by module, no @effect/platform, redis or jose until toHttpApp, a Redis store or jwtAuth is used", async () => {
    const graph = await importGraph("index.ts", "node")
    const atImport = [...graph.atImport]
    expect(atImport.filter((name) => /^(@effect\/platform|redis|jose)(\/|$)/.test(name))).toEqual([])
    // Neither Effect's index (every module) nor Schema (which brings fast-check): the user's schemas load what they use.
    expect(atImport.filter((name) => name === "effect" || name === "effect/Schema")).toEqual([])
    expect(atImport.filter((name) => !name.startsWith("node:") && !name.startsWith("effect/"))).toEqual([])
    expect([...graph.onUse].sort()).toEqual(expect.arrayContaining(["@effect/platform/HttpServerRequest", "jose", "redis"]))
    // Scalar's script is read by the first request for the docs page.
    expect(graph.lazySources).toContain("src/docs/scalarStandalone.ts")
    console.log(`[entries] the Node entry loads at import: ${atImport.sort().join(", ")}`)
  })

  it("the web build: no node: module at all, not even behind a dynamic import", async () => {
    const graph = await importGraph("index.web.ts", "browser")
    const everything = [...graph.atImport, ...graph.onUse]
    expect(everything.filter((name) => name.startsWith("node:"))).toEqual([])
    expect(everything.filter((name) => name === "redis" || name.startsWith("@redis/"))).toEqual([])
    expect([...graph.atImport].filter((name) => /^(@effect\/platform|jose)(\/|$)/.test(name))).toEqual([])
  })
})
