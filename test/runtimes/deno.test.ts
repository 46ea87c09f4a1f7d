import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundleWorker } from "../../examples/worker/build.js"
import { freePort } from "../support/freePort.js"
import { findTestBinary } from "../support/testBinaries.js"
import { FIXTURE_CHECKS } from "./support/fixtureChecks.js"
import { queryserveFromSource } from "./support/fromSource.js"
import { type RuntimeProcess, startRuntime } from "./support/runtimeProcess.js"

const deno = findTestBinary("Deno", "@deno/linux-x64-glibc/deno")

const FIXTURE = fileURLToPath(new URL("./fixture/web.ts", import.meta.url))

describe.skipIf(deno === undefined)("on Deno (`deno serve`), with the web build and network access only", () => {
  let directory: string
  let runtime: RuntimeProcess
  let base: string

  beforeAll(async () => {
    // Deno resolves a package with the `deno` condition, which leads to the web build (entries.test.ts).
    directory = mkdtempSync(join(tmpdir(), "queryserve-deno-"))
    const bundle = await bundleWorker({ entryPoint: FIXTURE, outdir: directory, conditions: ["deno"], plugins: [queryserveFromSource()] })
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    // No --allow-read, --allow-env or --allow-sys: the web build needs none of them.
    runtime = await startRuntime(deno!, ["serve", `--allow-net=127.0.0.1:${port}`, "--host", "127.0.0.1", "--port", String(port), bundle.entry], {
      cwd: directory,
      readyUrl: `${base}/api/openapi.json`,
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", DENO_DIR: join(directory, ".deno") }
    })
  })

  afterAll(async () => {
    await runtime?.stop()
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  })

  for (const [name, check] of FIXTURE_CHECKS) it(name, () => check(base))

  it("refuses start() in the web build, naming createFetchHandler", async () => {
    expect(await (await fetch(`${base}/start-error`)).text()).toContain("createFetchHandler")
  })
})
