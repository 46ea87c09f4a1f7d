import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { defineServe, type RunningServer, withSecurityScheme } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { createAnalyticsApi } from "../../examples/analytics/api.js"
import { createDemoDatabase, type DemoDatabase } from "../../examples/analytics/dataset.js"
import { ConnectionPool, duckDbDriver } from "../../examples/analytics/duckdb.js"
import { createDb } from "../../examples/analytics/sql.js"
import { launchChromium } from "../support/chromium.js"

const CHROMIUM = "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available && process.env.CI !== "true") {
  console.log(`[docs browser test] skipped: ${CHROMIUM} is missing (apt-get install chromium); with CI=true it fails instead`)
}

const apiKey = withSecurityScheme(() => null, { type: "apiKey", in: "header", name: "x-api-key" })

const endpoints = {
  revenue: { name: "Weekly revenue", tags: ["Sales"], inputSchema: Schema.Struct({ from: Schema.String, weeks: Schema.optional(Schema.Int) }), query: () => [] },
  topCustomers: { name: "Top customers", tags: ["Sales"], outputSchema: Schema.Array(Schema.Struct({ name: Schema.String })), query: () => [] },
  churn: { name: "Churn rate", tags: ["Retention"], method: "POST" as const, inputSchema: z.object({ cohort: z.string() }), query: () => 0 },
  health: { name: "Service health", requiresAuth: false, query: () => "ok" }
}

const launch = (userDataDir: string) => launchChromium(CHROMIUM, userDataDir)

describe.skipIf(!available && process.env.CI !== "true")("the docs page in a real browser (Debian chromium, loopback only)", () => {
  let server: RunningServer
  let demoServer: RunningServer
  let demo: DemoDatabase
  let pool: ConnectionPool
  let userDataDir: string
  const api = defineServe({ auth: apiKey, docs: { title: "Sales analytics" }, queries: endpoints })

  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1" })
    userDataDir = await mkdtemp(join(tmpdir(), "queryserve-chromium-"))
    // The demo itself, over a small DuckDB dataset built in this process.
    demo = await createDemoDatabase({ rows: 2_000, log: () => {} })
    pool = await ConnectionPool.open(demo.instance, 1)
    demoServer = await createAnalyticsApi(createDb(duckDbDriver(pool)), { queryLogging: false }).start({
      port: 0,
      hostname: "127.0.0.1",
      handleSignals: false
    })
  })

  afterAll(async () => {
    await server?.stop()
    await demoServer?.stop()
    pool?.closeSync()
    await demo?.close()
    if (userDataDir !== undefined) await rm(userDataDir, { recursive: true, force: true })
  })

  it("renders every endpoint's name from this server alone, with the page's CSP in force", async () => {
    const context = await launch(userDataDir)
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      const origin = new URL(server.url).origin
      const blocked: Array<string> = []
      const served: Array<string> = []
      await page.route("**/*", (route) => {
        const url = route.request().url()
        if (new URL(url).origin === origin) {
          served.push(url)
          return route.continue()
        }
        blocked.push(url)
        return route.abort()
      })
      const problems: Array<string> = []
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text())
      })
      page.on("pageerror", (error) => problems.push(error.message))

      const response = await page.goto(`${server.url}/api/analytics/docs`)
      expect(response?.status()).toBe(200)
      const sidebar = page.getByRole("navigation")
      await page.getByRole("heading", { name: "Sales analytics" }).first().waitFor({ timeout: 20_000 })
      // Scalar opens the first tag group only: open the others so every operation is on screen.
      const closedGroup = sidebar.locator("button[aria-expanded=false]")
      while ((await closedGroup.count()) > 0) await closedGroup.first().click()
      for (const { name } of Object.values(endpoints)) {
        await expect(sidebar.getByText(name, { exact: true }).waitFor({ state: "visible", timeout: 5_000 })).resolves.toBeUndefined()
      }
      await page.screenshot({ path: join(tmpdir(), "queryserve-docs.png") })

      expect(await page.title()).toBe("Sales analytics")
      expect(served.some((url) => url.includes("/api/analytics/openapi.json"))).toBe(true)
      expect(served.some((url) => url.includes("/api/analytics/docs/scalar.js?v="))).toBe(true)
      expect(blocked).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("shows the demo's authentication as required, and a Send with a demo key answers 200", async () => {
    const context = await launch(userDataDir)
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      const answers: Array<{ url: string; status: number; key: string | undefined }> = []
      page.on("response", (response) => {
        const url = response.url()
        if (url.includes("/api/analytics/revenueByDay")) answers.push({ url, status: response.status(), key: response.request().headers()["x-api-key"] })
      })
      await page.goto(`${demoServer.url}/api/analytics/docs`)
      await page.getByRole("heading", { name: "queryserve analytics demo" }).first().waitFor({ timeout: 20_000 })
      // The page's Authentication section: "Required", because the document requires the API key at its root.
      const authentication = page.getByText("Authentication", { exact: true }).first()
      await authentication.waitFor({ timeout: 5_000 })
      await expect(authentication.locator("xpath=..").getByText("Required", { exact: true }).isVisible()).resolves.toBe(true)
      await expect(page.getByText("Optional", { exact: true }).count()).resolves.toBe(0)
      // Fill the key once, on the page; open the first operation (Revenue per day) and send it.
      await page.getByLabel("Value").first().fill("demo-acme-key")
      await page.getByRole("button", { name: /Test Request/ }).first().click()
      await page.getByRole("button", { name: /^Send\b/ }).first().click()
      await page.getByText("200 OK", { exact: true }).first().waitFor({ timeout: 15_000 })
      await page.screenshot({ path: join(tmpdir(), "queryserve-docs-send.png") })
      expect(answers).toEqual([expect.objectContaining({ status: 200, key: "demo-acme-key" })])
      expect(answers[0]!.url).toMatch(/revenueByDay\?from=2025-03-01&to=2025-03-01$/)
    } finally {
      await context.close()
    }
  }, 60_000)
})
