/**
 * The package as users install it: `npm pack` (which runs `prepare`, the same build `npm install`
 * from the git repository runs), the tarball unpacked into a scratch project, imported from an ES
 * module there and a TypeScript file type-checked against its declarations.
 *
 * The scratch project gets the package's dependencies by linking this repository's installed copies,
 * one link per declared dependency: no network, and an import of anything undeclared fails there.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const NODE_MODULES = join(ROOT, "node_modules")

interface PackedFile {
  readonly path: string
}

const USAGE_JS = `
import { defineServe } from "queryserve"
import { Schema } from "effect"
const api = defineServe({
  queries: {
    total: {
      inputSchema: Schema.Struct({ n: Schema.NumberFromString }),
      outputSchema: Schema.Struct({ total: Schema.Number }),
      query: ({ input }) => ({ total: input.n * 2 })
    }
  }
})
const answer = await api.handler({ method: "GET", path: "/api/analytics/total", query: { n: "21" }, headers: {} })
const script = await api.handler({ method: "GET", path: "/api/analytics/docs/scalar.js", headers: {} })
console.log(JSON.stringify({ status: answer.status, body: answer.body, script: script.status, scriptBytes: script.body.length }))
await api.dispose()
`

const USAGE_TS = `
import { Schema } from "effect"
import { createNodeHandler, initServe, type NodeListener, type OpenApiDocument, type ServeEndpoint } from "queryserve"

const { query, define } = initServe({ context: () => ({ factor: 2 }) })
const api = define({
  queries: {
    total: query
      .input(Schema.Struct({ n: Schema.NumberFromString }))
      .output(Schema.Struct({ total: Schema.Number }))
      .query(({ input, ctx }) => ({ total: input.n * ctx.factor }))
  }
})
export const total: Promise<{ readonly total: number }> = api.execute("total", { input: { n: "2" } })
// @ts-expect-error the caller sends the schema's encoded side: a string
export const wrong = api.execute("total", { input: { n: 2 } })
// @ts-expect-error no such query
export const missing = api.execute("nope")
export const listener: NodeListener = createNodeHandler(api.handler)
export const endpoints: ReadonlyArray<ServeEndpoint> = api.describe()
export type Servers = OpenApiDocument["servers"]
`

describe("the packed package, installed in a scratch project", () => {
  let scratch: string
  let packed: ReadonlyArray<PackedFile>

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "queryserve-pack-"))
    const started = performance.now()
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
    const [result] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string; files: Array<PackedFile>; size: number }>
    packed = result!.files
    const installed = join(scratch, "node_modules", "queryserve")
    await mkdir(installed, { recursive: true })
    await run("tar", ["-xzf", join(scratch, result!.filename), "-C", installed, "--strip-components=1"])
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    for (const dependency of [...Object.keys(manifest.dependencies), "@types/node"]) {
      const link = join(scratch, "node_modules", dependency)
      await mkdir(dirname(link), { recursive: true })
      await symlink(join(NODE_MODULES, dependency), link, "dir")
    }
    await writeFile(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }))
    await writeFile(join(scratch, "usage.mjs"), USAGE_JS)
    await writeFile(join(scratch, "usage.ts"), USAGE_TS)
    await writeFile(join(scratch, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
      files: ["usage.ts"]
    }))
    console.log(`[package] npm pack (with prepare) and unpack: ${((performance.now() - started) / 1000).toFixed(1)} s, ${result!.size} bytes, ${packed.length} files`)
  }, 120_000)

  afterAll(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
  })

  it("holds the built dist/ with its declarations (what `npm install` from git lacked), and no tests or build state", () => {
    const paths = packed.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining([
      "package.json", "dist/index.js", "dist/index.d.ts", "dist/index.web.js", "dist/index.web.d.ts", "src/index.ts"
    ]))
    // Bundled: the entries and their chunks, Scalar's script one of them, not a file per source module.
    expect(paths.filter((path) => path.startsWith("dist/chunks/scalarStandalone-") && path.endsWith(".js"))).toHaveLength(1)
    expect(paths).not.toContain("dist/adapters/node.js")
    expect(paths.filter((path) => path.startsWith("test/") || path.startsWith("examples/") || path.endsWith(".tsbuildinfo"))).toEqual([])
  })

  it("imports from an ES module and answers a request, the docs script included", async () => {
    const { stdout } = await run(process.execPath, ["usage.mjs"], { cwd: scratch })
    expect(JSON.parse(stdout)).toEqual({ status: 200, body: "{\"total\":42}", script: 200, scriptBytes: expect.any(Number) })
    expect((JSON.parse(stdout) as { scriptBytes: number }).scriptBytes).toBeGreaterThan(1_000_000)
  }, 30_000)

  it("type-checks a TypeScript file against its declarations, inferred types included", async () => {
    const tsc = join(NODE_MODULES, "typescript", "bin", "tsc")
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: scratch }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error)
    )
    expect(result).toBe("")
  }, 60_000)
})
