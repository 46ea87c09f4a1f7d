/**
 * The demo's dashboard in headless Chromium, against the demo itself (`npm start` in a child
 * process, a small dataset, loopback): the charts are drawn from the `orders` dataset with the
 * numbers the API gives the chosen key, nothing is asked of any other host, no console error; a
 * wrong key shows the server's 401 message, and a stopped server a retry state.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findChromium, launchChromium } from "../support/chromium.js"
import { type DemoProcess, startDemo } from "./support/demoProcess.js"

/** Where the docs' screenshot is saved, only when asked (UPDATE_SCREENSHOTS=1): a test run leaves the tree as it was. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS === "1" ? fileURLToPath(new URL("../../docs/images/dashboard.png", import.meta.url)) : undefined
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47])
const chromiumPath = findChromium("the dashboard test")

type Row = Readonly<Record<string, string | number>>

describe.skipIf(chromiumPath === undefined)("the demo's dashboard in Chromium (loopback only)", () => {
  let demo: DemoProcess
  let context: BrowserContext
  let page: Page
  let userDataDir: string
  let origin: string
  /** Requests the page made to a host other than the demo's: aborted, and listed here. */
  const leaving: Array<string> = []
  /** Console errors and uncaught exceptions of the page. */
  const errors: Array<string> = []
  /** The API key of every dataset request the page sent. */
  const keysSent: Array<string | undefined> = []

  const ask = async (key: string, query: object): Promise<{ status: number; body: { data: Array<Row> } & { error?: { message: string } } }> => {
    const response = await fetch(`${demo.baseUrl}/datasets/orders`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(query)
    })
    return { status: response.status, body: await response.json() }
  }

  const money = (value: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 }).format(value)

  /** What the page should show as the key's total revenue: the API's own answer, summed. */
  const totalRevenue = async (key: string) => {
    const { body } = await ask(key, { dimensions: ["region"], measures: ["revenue"] })
    return money(body.data.reduce((sum, row) => sum + Number(row.revenue), 0))
  }

  beforeAll(async () => {
    demo = await startDemo(20_000)
    origin = new URL(demo.baseUrl).origin
    userDataDir = await mkdtemp(join(tmpdir(), "queryserve-dashboard-"))
    context = await launchChromium(chromiumPath!, userDataDir)
    page = context.pages()[0] ?? (await context.newPage())
    await page.route("**/*", (route) => {
      const url = route.request().url()
      if (new URL(url).origin === origin) return route.continue()
      leaving.push(url)
      return route.abort()
    })
    page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())))
    page.on("pageerror", (error) => void errors.push(error.message))
    page.on("request", (request) => {
      if (request.url().includes("/datasets/orders")) keysSent.push(request.headers()["x-api-key"])
    })
  }, 90_000)

  afterAll(async () => {
    await context?.close()
    await demo?.stop("SIGTERM")
    if (userDataDir !== undefined) await rm(userDataDir, { recursive: true, force: true })
  })

  it("draws revenue per month and per region for the first demo key, with the API's numbers", async () => {
    const response = await page.goto(`${origin}/`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toMatch(/^default-src 'self'/)
    const months = page.getByTestId("revenue-by-month")
    const regions = page.getByTestId("revenue-by-region")
    await months.locator("path.recharts-line-curve").waitFor({ timeout: 20_000 })
    await regions.locator("path.recharts-rectangle").first().waitFor({ timeout: 20_000 })

    // The line has a point per month of the year; the bars one per region of the tenant.
    const byRegion = await ask("demo-acme-key", { dimensions: ["region"], measures: ["revenue"] })
    expect(await regions.locator("path.recharts-rectangle").count()).toBe(byRegion.body.data.length)
    const line = await months.locator("path.recharts-line-curve").getAttribute("d")
    expect(line?.match(/[LC]/g)?.length).toBe(11)
    await expect(page.getByTestId("total-revenue").textContent()).resolves.toBe(await totalRevenue("demo-acme-key"))

    // The first page of orders, newest first, as the dataset pages them.
    const firstPage = await ask("demo-acme-key", {
      dimensions: ["order_id", "day", "region", "product_id"],
      measures: ["revenue"],
      orderBy: [{ field: "day", direction: "desc" }, { field: "order_id", direction: "desc" }],
      limit: 10
    })
    const orderIds = page.getByTestId("orders").locator("tbody tr td:first-child")
    await orderIds.first().waitFor()
    expect(await orderIds.allTextContents()).toEqual(firstPage.body.data.map((row) => String(row.order_id)))

    const screenshot = await page.screenshot({ path: SCREENSHOT, fullPage: true })
    expect(screenshot.subarray(0, 4)).toEqual(PNG_SIGNATURE)
    expect(keysSent.length).toBeGreaterThanOrEqual(3)
    expect(new Set(keysSent)).toEqual(new Set(["demo-acme-key"]))
    expect(leaving).toEqual([])
    expect(errors).toEqual([])
  }, 60_000)

  it("pages through the orders with the answers' cursors", async () => {
    const orderIds = page.getByTestId("orders").locator("tbody tr td:first-child")
    const first = await orderIds.allTextContents()
    await page.getByRole("button", { name: "Next" }).click()
    await page.getByTestId("orders-page").filter({ hasText: "Page 2" }).waitFor()
    await expect.poll(() => orderIds.allTextContents()).not.toEqual(first)
    const second = await orderIds.allTextContents()
    expect(second).toHaveLength(10)
    expect(second.filter((id) => first.includes(id))).toEqual([])
    await page.getByRole("button", { name: "Previous" }).click()
    await expect.poll(() => orderIds.allTextContents()).toEqual(first)
    expect(errors).toEqual([])
  }, 30_000)

  it("switching the key shows the other tenant's numbers, asked with that key; the admin's are every tenant's", async () => {
    const acme = await page.getByTestId("total-revenue").textContent()
    const globex = await totalRevenue("demo-globex-key")
    expect(globex).not.toBe(acme)
    keysSent.length = 0
    await page.getByTestId("api-key").selectOption("demo-globex-key")
    await page.getByTestId("total-revenue").filter({ hasText: globex }).waitFor({ timeout: 15_000 })
    await page.getByTestId("revenue-by-region").locator("path.recharts-rectangle").first().waitFor()
    expect(new Set(keysSent)).toEqual(new Set(["demo-globex-key"]))
    // The admin key has no tenant: the dataset lets it see every tenant's orders.
    const everyone = await totalRevenue("demo-admin-key")
    expect(everyone).not.toBe(globex)
    await page.getByTestId("api-key").selectOption("demo-admin-key")
    await page.getByTestId("total-revenue").filter({ hasText: everyone }).waitFor({ timeout: 15_000 })
    expect(leaving).toEqual([])
    expect(errors).toEqual([])
  }, 30_000)

  it("a wrong key shows the 401 envelope's message, not an empty chart", async () => {
    const refused = await ask("not-a-demo-key", { measures: ["revenue"] })
    expect(refused.status).toBe(401)
    await page.getByTestId("api-key").selectOption("not-a-demo-key")
    const alert = page.getByRole("alert")
    await alert.waitFor({ timeout: 15_000 })
    await expect(alert.textContent()).resolves.toContain(refused.body.error!.message)
    await expect(alert.textContent()).resolves.toContain("401")
    await expect(page.getByTestId("revenue-by-month").count()).resolves.toBe(0)
    // The browser reports each refused request as a console error; nothing else may appear.
    expect(errors.filter((text) => !/status of 401/.test(text))).toEqual([])
  }, 30_000)

  it("with the server stopped, the page says so and retries, then offers a Retry button", async () => {
    expect(await demo.stop("SIGTERM")).toBe(0)
    errors.length = 0
    await page.getByTestId("api-key").selectOption("demo-acme-key")
    const alert = page.getByRole("alert")
    await alert.filter({ hasText: "The server does not answer" }).waitFor({ timeout: 15_000 })
    await alert.filter({ hasText: /Trying again \(attempt \d\)/ }).waitFor({ timeout: 15_000 })
    await page.getByRole("button", { name: "Retry" }).waitFor({ timeout: 30_000 })
    expect(errors.filter((text) => !/ERR_CONNECTION_REFUSED/.test(text))).toEqual([])
    expect(leaving).toEqual([])
  }, 60_000)
})
