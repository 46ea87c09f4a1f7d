/**
 * What the web build does at module load, where a Worker's global scope is: workerd refuses some
 * operations there ("Disallowed operation called within global scope"): timers, random values from
 * Web Crypto, and on some versions `new AbortController()`. The newest workerd accepts the last, the
 * stable miniflare `wrangler dev` runs does not; workerd.test.ts runs on both, and this test names
 * the call (its source file) wherever the runtime is not installed.
 *
 * The fixture (an API defined at the module's top level, as a Worker defines it) is bundled as for
 * workerd (with source maps, so that a call is named by its source file) and imported in a Node
 * process whose globals record every such call made while the modules evaluate. Calls made later,
 * while requests are answered, are allowed everywhere and not recorded. `Math.random` is not among
 * them: workerd allows it at global scope, and Effect calls it while its modules load.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, expect, it } from "vitest"
import * as esbuild from "esbuild"
import { queryserveFromSource } from "./support/fromSource.js"

const run = promisify(execFile)
const FIXTURE = fileURLToPath(new URL("./fixture/web.ts", import.meta.url))

/** Wraps the operations workerd refuses at global scope, imports the module, and prints what was called. */
const RECORD_GLOBAL_SCOPE = `
const calls = []
const record = (name) => calls.push(name + " " + (new Error().stack ?? "").split("\\n")[3].trim())
const restore = []
const wrap = (owner, key, name) => {
  const original = owner[key]
  restore.push(() => { owner[key] = original })
  owner[key] = function (...args) {
    record(name)
    return new.target ? Reflect.construct(original, args, new.target) : original.apply(this, args)
  }
}
wrap(globalThis, "AbortController", "new AbortController()")
wrap(globalThis, "setTimeout", "setTimeout")
wrap(globalThis, "setInterval", "setInterval")
wrap(globalThis.crypto, "getRandomValues", "crypto.getRandomValues")
wrap(globalThis.crypto, "randomUUID", "crypto.randomUUID")
await import(process.argv[1])
for (const undo of restore) undo()
console.log(JSON.stringify(calls))
`

const directory = mkdtempSync(join(tmpdir(), "queryserve-global-scope-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

it("loads with an API defined at top level, and no timer, random value or AbortController made while loading", async () => {
  await esbuild.build({
    entryPoints: { web: FIXTURE },
    outdir: directory,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    sourcemap: true,
    tsconfigRaw: {},
    plugins: [queryserveFromSource()],
    logLevel: "warning"
  })
  const entry = pathToFileURL(join(directory, "web.js")).href
  const { stdout } = await run(process.execPath, ["--enable-source-maps", "--input-type=module", "-e", RECORD_GLOBAL_SCOPE, entry])
  const calls = JSON.parse(stdout) as Array<string>
  expect(calls).toEqual([])
}, 60_000)
