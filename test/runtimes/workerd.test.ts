import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundleWorker, type WorkerBundle } from "../../examples/worker/build.js"
import { freePort } from "../support/freePort.js"
import { findTestBinary, STABLE_MINIFLARE_BINARIES } from "../support/testBinaries.js"
import { FIXTURE_CHECKS } from "./support/fixtureChecks.js"
import { queryserveFromSource } from "./support/fromSource.js"
import type { RuntimeProcess } from "./support/runtimeProcess.js"
import { startWorkerd } from "./support/workerd.js"

const WORKERD = "@cloudflare/workerd-linux-64/bin/workerd"

/**
 * The newest workerd, and the older one the stable miniflare pins (what `wrangler dev` runs), which
 * refuses more at a Worker's global scope: the fixture defines its API at the module's top level.
 */
const RUNTIMES = [
  { label: "the newest workerd", binary: findTestBinary("workerd", WORKERD) },
  { label: "the stable miniflare's workerd", binary: findTestBinary("The stable miniflare's workerd", WORKERD, STABLE_MINIFLARE_BINARIES) }
]

const FIXTURE = fileURLToPath(new URL("./fixture/web.ts", import.meta.url))
const EXAMPLE_KEYS = {
  "acme-key": { name: "Acme analyst", tenantId: "acme" },
  "globex-key": { name: "Globex analyst", tenantId: "globex" }
}

describe.each(RUNTIMES)("on $label, without nodejs_compat", ({ binary: workerd }) => {
  if (workerd === undefined) return void it.skip("is not installed")
  let directory: string
  let runtime: RuntimeProcess
  let fixture: string
  let example: string
  let exampleBundle: WorkerBundle

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "queryserve-workerd-"))
    const plugins = [queryserveFromSource()]
    const [fixtureBundle, workerBundle] = await Promise.all([
      bundleWorker({ entryPoint: FIXTURE, outdir: join(directory, "fixture"), plugins }),
      bundleWorker({ outdir: join(directory, "example"), plugins })
    ])
    exampleBundle = workerBundle
    const [fixturePort, examplePort] = [await freePort(), await freePort()]
    fixture = `http://127.0.0.1:${fixturePort}`
    example = `http://127.0.0.1:${examplePort}`
    runtime = await startWorkerd(workerd!, directory, [
      { name: "fixture", bundle: fixtureBundle, port: fixturePort },
      { name: "example", bundle: workerBundle, port: examplePort, bindings: { API_KEYS: JSON.stringify(EXAMPLE_KEYS) } }
    ], "/api/openapi.json")
  })

  afterAll(async () => {
    await runtime?.stop()
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  })

  for (const [name, check] of FIXTURE_CHECKS) it(name, () => check(fixture))

  it("refuses start() in the web build, naming createFetchHandler", async () => {
    const message = await (await fetch(`${fixture}/start-error`)).text()
    expect(message).toContain("createFetchHandler")
  })

  describe("the Worker example", () => {
    const get = (path: string, key?: string) => fetch(`${example}${path}`, { headers: key === undefined ? {} : { "x-api-key": key } })

    it("starts with less than 1 MiB of minified code, Scalar's script in a chunk of its own", () => {
      expect(exampleBundle.startupBytes).toBeLessThan(1024 * 1024)
      expect(exampleBundle.docsChunkBytes).toBeGreaterThan(1_000_000)
      console.log(
        `[worker bundle] start-up ${(exampleBundle.startupBytes / 1024).toFixed(1)} KiB minified, ` +
          `${(exampleBundle.startupGzipBytes / 1024).toFixed(1)} KiB gzip; docs chunk ${(exampleBundle.docsChunkBytes / 1024).toFixed(1)} KiB`
      )
    })

    it("answers each tenant with its own data, and only with a key", async () => {
      expect(await (await get("/api/health")).json()).toEqual({ ok: true })
      const acme = (await (await get("/api/revenue?region=eu", "acme-key")).json()) as { total: number; months: number }
      const globex = (await (await get("/api/revenue?region=eu", "globex-key")).json()) as { total: number; months: number }
      expect(acme).toEqual({ region: "eu", months: 6, total: 6_150 })
      expect(globex).toEqual({ region: "eu", months: 6, total: 12_150 })
      expect((await get("/api/revenue?region=eu")).status).toBe(401)
      expect((await get("/api/revenue?region=mars", "acme-key")).status).toBe(400)
    })

    it("validates a JSON body", async () => {
      const post = (body: unknown) =>
        fetch(`${example}/api/topMonths`, { method: "POST", headers: { "x-api-key": "acme-key", "content-type": "application/json" }, body: JSON.stringify(body) })
      expect(await (await post({ region: "us", limit: 2 })).json()).toEqual([
        { month: "2025-06", revenue: 1_150 },
        { month: "2025-05", revenue: 1_140 }
      ])
      expect((await post({ region: "us", limit: 13 })).status).toBe(400)
    })

    it("serves its docs page, loading Scalar's chunk on first use", async () => {
      const page = await (await get("/api/docs")).text()
      const src = /<script src="([^"]+)"><\/script>/.exec(page)![1]!
      const script = await fetch(new URL(src, `${example}/api/docs`))
      expect(script.status).toBe(200)
      expect((await script.text()).length).toBeGreaterThan(1_000_000)
    })
  })
})
