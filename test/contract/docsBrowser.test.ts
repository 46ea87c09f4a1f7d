import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { chromium } from "playwright-core"
import { defineServe, type RunningServer, withSecurityScheme } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

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

describe.skipIf(!available && process.env.CI !== "true")("the docs page in a real browser (Debian chromium, loopback only)", () => {
  let server: RunningServer
  let userDataDir: string
  const api = defineServe({ auth: apiKey, docs: { title: "Sales analytics" }, queries: endpoints })

  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1" })
    userDataDir = await mkdtemp(join(tmpdir(), "queryserve-chromium-"))
  })

  afterAll(async () => {
    await server?.stop()
    if (userDataDir !== undefined) await rm(userDataDir, { recursive: true, force: true })
  })

  it("renders every endpoint's name from this server alone, with the page's CSP in force", async () => {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
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
})
