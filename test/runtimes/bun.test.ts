import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, it } from "vitest"
import { freePort } from "../support/freePort.js"
import { findTestBinary } from "../support/testBinaries.js"
import { FIXTURE_CHECKS } from "./support/fixtureChecks.js"
import { type RuntimeProcess, startRuntime } from "./support/runtimeProcess.js"

const bun = findTestBinary("Bun", "@oven/bun-linux-x64/bin/bun")

const ROOT = fileURLToPath(new URL("../../", import.meta.url))

describe.skipIf(bun === undefined)("on Bun (Bun.serve), running the Node entry from source", () => {
  let runtime: RuntimeProcess
  let base: string

  beforeAll(async () => {
    // Bun resolves a package with the `bun` and `node` conditions: the Node entry. Here it runs the
    // TypeScript sources itself, `queryserve` mapped to src/index.ts by tsconfig.json.
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    runtime = await startRuntime(bun!, ["run", "test/runtimes/fixture/bun.ts", String(port)], {
      cwd: ROOT,
      readyUrl: `${base}/api/openapi.json`,
      env: { NO_COLOR: "1" }
    })
  })

  afterAll(() => runtime?.stop())

  for (const [name, check] of FIXTURE_CHECKS) it(name, () => check(base))
})
