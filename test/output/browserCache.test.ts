import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { apiKeyAuth, defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const CHROMIUM = "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available && process.env.CI !== "true") {
  console.log(`[browser cache test] skipped: ${CHROMIUM} is missing (apt-get install chromium); with CI=true it fails instead`)
}

const TENANT_KEYS = { "key-acme": { tenantId: "acme" }, "key-globex": { tenantId: "globex" } }

// A browser keys its HTTP cache by URL and the headers an answer names in Vary. One that signs in with
// other credentials (a second user, an admin switching tenants) must not get the first caller's answer.
describe.skipIf(!available && process.env.CI !== "true")("private answers in a real browser's HTTP cache (Debian chromium, loopback only)", () => {
  const runs = { keyed: 0, custom: 0 }
  const api = defineServe({
    tenant: { extract: (auth) => (typeof auth?.tenantId === "string" ? auth.tenantId : null) },
    queries: {
      keyed: {
        cacheTtlMs: 60_000,
        auth: apiKeyAuth({ keys: TENANT_KEYS }),
        query: ({ ctx }: { ctx: { tenantId: string } }) => ({ tenant: ctx.tenantId, run: ++runs.keyed })
      },
      custom: {
        cacheTtlMs: 60_000,
        auth: ({ request }) => {
          const key = request.headers?.["x-session"]
          return typeof key === "string" && key in TENANT_KEYS ? TENANT_KEYS[key as keyof typeof TENANT_KEYS] : null
        },
        query: ({ ctx }: { ctx: { tenantId: string } }) => ({ tenant: ctx.tenantId, run: ++runs.custom })
      }
    }
  })
  let server: RunningServer
  let browser: Awaited<ReturnType<typeof chromium.launch>>
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  /** Fetches `path` from the page once per credential in turn, and gives each answer's body. */
  const askInTurn = async (path: string, header: string, keys: ReadonlyArray<string>): Promise<Array<unknown>> => {
    const page = await browser.newPage()
    try {
      await page.goto(`${server.url}/api/analytics/openapi.json`)
      return await page.evaluate(
        async ({ path, header, keys }) => {
          const bodies: Array<unknown> = []
          for (const key of keys) bodies.push(await (await fetch(path, { headers: { [header]: key } })).json())
          return bodies
        },
        { path: `/api/analytics/${path}`, header, keys }
      )
    } finally {
      await page.close()
    }
  }

  it("keeps an API key's answer for that key only, and still serves it again from the browser's cache", async () => {
    // The second answer comes from the browser's cache (the server ran once for it), the third does not.
    const bodies = await askInTurn("keyed", "x-api-key", ["key-acme", "key-acme", "key-globex"])
    expect(bodies).toEqual([{ tenant: "acme", run: 1 }, { tenant: "acme", run: 1 }, { tenant: "globex", run: 2 }])
    expect(runs.keyed).toBe(2)
  })

  it("has an answer of a strategy that does not say where its credentials are revalidated, never reused for another caller", async () => {
    const bodies = await askInTurn("custom", "x-session", ["key-acme", "key-globex"])
    expect(bodies).toEqual([{ tenant: "acme", run: 1 }, { tenant: "globex", run: 2 }])
  })
})
