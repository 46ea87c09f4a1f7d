/**
 * The README's first TypeScript block, as a newcomer runs it: copied verbatim into a scratch ES module
 * project (`"type": "module"`) and run with tsx, `queryserve` and `effect` resolved from that project's
 * node_modules. `queryserve` there is this repository's source (a package.json whose export is
 * src/index.ts, so no build is needed and none races the package test's); `effect` is a link to this
 * repository's copy, the one the source imports too. The block is also type-checked there, strict.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TSX = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs")

/** What `tsc --init` and a Node ESM project come to: strict, NodeNext. */
const TSCONFIG = {
  compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
  files: ["server.ts"]
}

/** The first ```ts block of the README, as written. */
const firstTypeScriptBlock = (readme: string): string => {
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(readme)
  if (block === null) throw new Error("the README has no ```ts block")
  return block[1]!
}

/** A project of its own in `directory`, with queryserve and effect installed as links. */
const scratchProject = async (directory: string, program: string): Promise<void> => {
  const installed = join(directory, "node_modules", "queryserve")
  await mkdir(installed, { recursive: true })
  await writeFile(join(installed, "package.json"), JSON.stringify({ name: "queryserve", type: "module", exports: { ".": "./src/index.ts" } }))
  await symlink(join(ROOT, "src"), join(installed, "src"), "dir")
  await symlink(join(ROOT, "node_modules", "effect"), join(directory, "node_modules", "effect"), "dir")
  await mkdir(join(directory, "node_modules", "@types"))
  await symlink(join(ROOT, "node_modules", "@types", "node"), join(directory, "node_modules", "@types", "node"), "dir")
  await writeFile(join(directory, "tsconfig.json"), JSON.stringify(TSCONFIG))
  await writeFile(join(directory, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }))
  await writeFile(join(directory, "server.ts"), program)
}

describe("the README's example", () => {
  let scratch: string
  let child: ChildProcess
  let output = ""
  const exited = (): Promise<number | null> =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once("exit", resolve))

  /** Resolves with the output once it matches `pattern`; rejects if the program ends first. */
  const printed = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(output)
        if (match === null) return
        child.stdout!.off("data", check)
        resolve(match)
      }
      child.stdout!.on("data", check)
      void exited().then(() => reject(new Error(`the example exited:\n${output}`)))
      check()
    })

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "queryserve-readme-"))
    await scratchProject(scratch, firstTypeScriptBlock(await readFile(join(ROOT, "README.md"), "utf8")))
    // PORT=0: a free port; HOST: loopback only. Everything else as the README says.
    child = spawn(process.execPath, [TSX, "server.ts"], {
      cwd: scratch,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  })

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited()
    }
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
  })

  it("starts, printing one line with its URL and docs URL, then Acme's rows and no other tenant's", async () => {
    await printed(/revenue: 80[\s\S]*\]\n/)
    const lines = output.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^queryserve listening on http:\/\/127\.0\.0\.1:\d+, docs at http:\/\/127\.0\.0\.1:\d+\/api\/analytics\/docs$/)
    expect(output).toContain("tenant_id: 'acme'")
    expect(output).not.toContain("globex")
    expect(output).not.toMatch(/error|warn/i)
  }, 60_000)

  it("serves the endpoint over HTTP as the README's curl line calls it, and its docs page", async () => {
    const [, origin] = /listening on (http:\/\/\S+),/.exec(output)!
    const answer = await fetch(`${origin}/api/analytics/revenueByRegion?from=2025-01-01&to=2025-01-31`, { headers: { "x-api-key": "acme-key" } })
    expect(answer.status).toBe(200)
    expect(await answer.json()).toEqual([
      { tenant_id: "acme", day: "2025-01-03", region: "EU", revenue: 120 },
      { tenant_id: "acme", day: "2025-01-09", region: "US", revenue: 80 }
    ])
    expect((await fetch(`${origin}/api/analytics/docs`)).status).toBe(200)
    expect((await fetch(`${origin}/api/analytics/revenueByRegion?from=2025-01-01&to=2025-01-31`)).status).toBe(401)
  })

  it("type-checks under strict TypeScript, as an editor shows it", async () => {
    const diagnostics = await promisify(execFile)(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: scratch })
      .then(() => "", (error: { stdout?: string }) => error.stdout ?? String(error))
    expect(diagnostics).toBe("")
  }, 180_000)

  it("drains and ends on SIGTERM as the signal ends a program (tsx reports 128 + 15)", async () => {
    child.kill("SIGTERM")
    expect(await exited()).toBe(143)
  })
})
