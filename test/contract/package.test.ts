/**
 * The package as users install it: `npm pack` (which runs `prepare`, the same build `npm install`
 * from the git repository runs), the tarball unpacked into a scratch project, imported from an ES
 * module there and a TypeScript file type-checked against its declarations.
 *
 * The scratch project gets the package's dependencies by linking this repository's installed copies,
 * one link per declared dependency: no network, and an import of anything undeclared fails there. Its
 * React peers are optional: the first project has none of them; a second, for `queryserve/react`,
 * links them too.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises"
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

interface Manifest {
  readonly dependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta: Record<string, { readonly optional?: boolean }>
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

// The hooks' module, without a component to run them in: its retry policy tells the ServeClientError
// that the main entry exports by `instanceof`, which holds only if both entries share the one class.
const USAGE_REACT_JS = `
import { ServeClientError } from "queryserve"
import { createHooks, queryKeyOf, retryTransient } from "queryserve/react"
const hooks = createHooks({ baseUrl: "http://127.0.0.1:1/api/analytics" })
console.log(JSON.stringify({
  hooks: Object.keys(hooks).sort(),
  key: queryKeyOf("total", { n: "2" }),
  sameClass: retryTransient(0, new ServeClientError(503, undefined, undefined)),
  lookalike: retryTransient(0, { status: 503 })
}))
`

const USAGE_REACT_TS = `
import { Schema } from "effect"
import { defineServe, initServe, type ServeClientError } from "queryserve"
import { createHooks } from "queryserve/react"

const { query } = initServe({})
const api = defineServe({
  queries: {
    total: query
      .input(Schema.Struct({ n: Schema.NumberFromString }))
      .output(Schema.Struct({ total: Schema.Number }))
      .query(({ input }) => ({ total: input.n * 2 }))
  }
})
const hooks = createHooks<typeof api>({ baseUrl: "http://127.0.0.1:4000/api/analytics" })
export const useTotal = (): { total: number | undefined; error: ServeClientError | null } => {
  const answer = hooks.useQuery("total", { n: "2" })
  return { total: answer.data?.total, error: answer.error }
}
// @ts-expect-error the caller sends the schema's encoded side: a string
export const useWrong = () => hooks.useQuery("total", { n: 2 })
`

const TSCONFIG = JSON.stringify({
  compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
  files: ["usage.ts"]
})

/** `tsc -p tsconfig.json` in `project`: its diagnostics, "" when there are none. */
const typeCheck = (project: string): Promise<string> =>
  run(process.execPath, [join(NODE_MODULES, "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: project }).then(
    () => "",
    (error: { stdout?: string }) => error.stdout ?? String(error)
  )

/** The tarball unpacked into `project`'s node_modules, each of `linked` a link to this repository's copy. */
const install = async (project: string, tarball: string, linked: ReadonlyArray<string>): Promise<void> => {
  const installed = join(project, "node_modules", "queryserve")
  await mkdir(installed, { recursive: true })
  await run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"])
  for (const dependency of linked) {
    const link = join(project, "node_modules", dependency)
    await mkdir(dirname(link), { recursive: true })
    await symlink(join(NODE_MODULES, dependency), link, "dir")
  }
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }))
  await writeFile(join(project, "tsconfig.json"), TSCONFIG)
}

/** The JavaScript files under `directory`, as paths relative to it. */
const javaScriptFiles = async (directory: string): Promise<ReadonlyArray<string>> =>
  (await readdir(directory, { recursive: true })).filter((path) => path.endsWith(".js"))

describe("the packed package, installed in a scratch project", () => {
  let scratch: string
  let reactApp: string
  let manifest: Manifest
  let packed: ReadonlyArray<PackedFile>

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "queryserve-pack-"))
    const started = performance.now()
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
    const [result] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string; files: Array<PackedFile>; size: number }>
    packed = result!.files
    const tarball = join(scratch, result!.filename)
    manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as Manifest
    const dependencies = [...Object.keys(manifest.dependencies), "@types/node"]
    await install(scratch, tarball, dependencies)
    await writeFile(join(scratch, "usage.mjs"), USAGE_JS)
    await writeFile(join(scratch, "usage.ts"), USAGE_TS)
    reactApp = join(scratch, "react-app")
    await install(reactApp, tarball, [...dependencies, ...Object.keys(manifest.peerDependencies), "@types/react"])
    await writeFile(join(reactApp, "usage.mjs"), USAGE_REACT_JS)
    await writeFile(join(reactApp, "usage.ts"), USAGE_REACT_TS)
    console.log(`[package] npm pack (with prepare) and unpack: ${((performance.now() - started) / 1000).toFixed(1)} s, ${result!.size} bytes, ${packed.length} files`)
  }, 120_000)

  afterAll(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
  })

  it("holds the built dist/ with its declarations (what `npm install` from git lacked), and no tests or build state", () => {
    const paths = packed.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining([
      "package.json", "dist/index.js", "dist/index.d.ts", "dist/index.web.js", "dist/index.web.d.ts", "src/index.ts",
      "dist/react/index.js", "dist/react/index.d.ts"
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
    expect(await typeCheck(scratch)).toBe("")
  }, 60_000)

  it("asks for React and TanStack Query as optional peers: the project above has neither", () => {
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(["@tanstack/react-query", "react"])
    for (const peer of Object.keys(manifest.peerDependencies)) expect(manifest.peerDependenciesMeta[peer]).toEqual({ optional: true })
    expect(Object.keys(manifest.dependencies)).not.toContain("react")
  })

  it("loads queryserve/react beside the main entry, sharing its one ServeClientError class", async () => {
    const { stdout } = await run(process.execPath, ["usage.mjs"], { cwd: reactApp })
    expect(JSON.parse(stdout)).toEqual({
      hooks: ["useDataset", "useInfiniteQuery", "useQuery"],
      key: ["total", { n: "2" }],
      sameClass: true,
      lookalike: false
    })
    const dist = join(reactApp, "node_modules", "queryserve", "dist")
    const defining: Array<string> = []
    for (const file of await javaScriptFiles(dist)) {
      if (/\bServeClientError = class\b|\bclass ServeClientError\b/.test(await readFile(join(dist, file), "utf8"))) defining.push(file)
    }
    expect(defining).toHaveLength(1)
  }, 30_000)

  it("type-checks a component's hook calls against queryserve/react's declarations", async () => {
    expect(await typeCheck(reactApp)).toBe("")
  }, 60_000)
})
