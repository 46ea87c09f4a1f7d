import { buildDocsHtml, defineServe, type ServeResponse } from "queryserve"
import { describe, expect, it } from "vitest"
import { get } from "../support/requests.js"

/** The attributes of every `<script>` tag of a page. */
const scriptTags = (html: string): Array<{ attributes: Record<string, string>; content: string }> =>
  [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((match) => ({
    attributes: Object.fromEntries([...match[1]!.matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
    content: match[2]!
  }))

const unescapeAttribute = (value: string): string =>
  value.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/** Where the page's links lead when the browser loaded it from `pageUrl`. */
const linksOf = (response: ServeResponse, pageUrl: string) => {
  const [config, script] = scriptTags(response.body!)
  return {
    openapi: new URL(unescapeAttribute(config!.attributes["data-url"]!), pageUrl),
    script: new URL(unescapeAttribute(script!.attributes.src!), pageUrl)
  }
}

describe("the API-reference page", () => {
  const api = defineServe({ docs: { title: "Sales <API> & \"more\"" }, queries: { revenue: () => 1 } })

  it("is served at basePath + docs.path as HTML with an escaped title", async () => {
    const response = await api.handler(get("/api/analytics/docs"))
    expect(response.status).toBe(200)
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(response.body).toContain("<title>Sales &lt;API&gt; &amp; &quot;more&quot;</title>")
    expect(response.body).not.toContain("<API>")
  })

  it("runs no inline script, and says so with a Content-Security-Policy that allows only this origin's scripts", async () => {
    const response = await api.handler(get("/api/analytics/docs"))
    const scripts = scriptTags(response.body!)
    expect(scripts).toHaveLength(2)
    expect(scripts[0]!.attributes).toMatchObject({ id: "api-reference", type: "application/json" })
    expect(scripts[0]!.content).toBe("")
    expect(JSON.parse(unescapeAttribute(scripts[0]!.attributes["data-configuration"]!))).toEqual({ withDefaultFonts: false, telemetry: false, showToolbar: "never" })
    expect(scripts[1]!.content).toBe("")
    expect(response.headers["content-security-policy"]).toContain("script-src 'self'")
    expect(response.body).not.toMatch(/https?:\/\//)
  })

  it("links the OpenAPI document and Scalar's script relative to the page, so a path prefix keeps working", async () => {
    for (const pagePath of ["/api/analytics/docs", "/api/analytics/docs/"]) {
      const response = await api.handler(get(pagePath))
      expect(response.status).toBe(200)
      const direct = linksOf(response, `http://127.0.0.1:4000${pagePath}`)
      expect(direct.openapi.pathname).toBe("/api/analytics/openapi.json")
      expect(direct.script.pathname).toBe("/api/analytics/docs/scalar.js")
      // The script's URL is versioned by its ETag, so the year-long cache ends when the script changes.
      const scriptEtag = (await api.handler(get(direct.script.pathname))).headers.etag!
      expect(`"${direct.script.searchParams.get("v")}"`).toBe(scriptEtag)
      const proxied = linksOf(response, `https://example.com/gateway${pagePath}`)
      expect(proxied.openapi.pathname).toBe("/gateway/api/analytics/openapi.json")
      expect(proxied.script.pathname).toBe("/gateway/api/analytics/docs/scalar.js")
    }
  })

  // node:http hands over the target as sent; a route miss is looked up again with dot segments resolved.
  it("answers any other spelling that reaches the page with one of its two pages: nobody can make the server keep a page per spelling", async () => {
    const fresh = defineServe({ queries: { revenue: () => 1 } })
    const canonical = await fresh.handler(get("/api/analytics/docs"))
    const slashed = await fresh.handler(get("/api/analytics/docs/"))
    for (let i = 0; i < 50; i++) {
      const dotted = await fresh.handler(get(`/api/analytics/x${i}/../docs`))
      expect(dotted.status).toBe(200)
      expect(dotted.headers.etag).toBe(canonical.headers.etag)
      expect(linksOf(dotted, "http://127.0.0.1:4000/api/analytics/docs").openapi.pathname).toBe("/api/analytics/openapi.json")
      expect((await fresh.handler(get(`/api/analytics/x${i}/../docs/`))).headers.etag).toBe(slashed.headers.etag)
    }
    expect(slashed.headers.etag).not.toBe(canonical.headers.etag)
  })

  it("follows custom paths and titles, and is gone when disabled", async () => {
    const custom = defineServe({
      basePath: "/v1",
      docs: { path: "/reference" },
      openapi: { path: "/spec/openapi.json", info: { title: "From OpenAPI" } },
      queries: { a: () => 1 }
    })
    const response = await custom.handler(get("/v1/reference"))
    expect(response.body).toContain("<title>From OpenAPI</title>")
    const links = linksOf(response, "http://localhost/v1/reference")
    expect(links.openapi.pathname).toBe("/v1/spec/openapi.json")
    expect(links.script.pathname).toBe("/v1/reference/scalar.js")
    expect((await custom.handler(get(links.script.pathname))).status).toBe(200)
    // A page at the root: its script is beside it at /scalar.js, and the root has one spelling.
    const atRoot = defineServe({ basePath: "/", docs: { path: "/" }, queries: { a: () => 1 } })
    const rootPage = await atRoot.handler(get("/"))
    const rootLinks = linksOf(rootPage, "http://localhost/")
    expect([rootLinks.script.pathname, rootLinks.openapi.pathname]).toEqual(["/scalar.js", "/openapi.json"])
    expect((await atRoot.handler(get(rootLinks.script.pathname))).status).toBe(200)
    const disabled = defineServe({ docs: { enabled: false }, queries: { a: () => 1 } })
    expect((await disabled.handler(get("/api/analytics/docs"))).status).toBe(404)
    expect((await disabled.handler(get("/api/analytics/docs/scalar.js"))).status).toBe(404)
    expect((await disabled.handler(get("/api/analytics/openapi.json"))).status).toBe(200)
  })
})

describe("Scalar's script", () => {
  const api = defineServe({ queries: { a: () => 1 } })

  it("comes from the package itself, long-cached with a strong ETag", async () => {
    const response = await api.handler(get("/api/analytics/docs/scalar.js"))
    expect(response.status).toBe(200)
    expect(response.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(response.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
    expect(response.headers.etag).toMatch(/^"[\w-]{27}"$/)
    expect(response.body!.length).toBeGreaterThan(1_000_000)
    expect(response.body).toContain("@scalar/api-reference")
  })

  it("answers a matching If-None-Match with 304 and no body, a stale one with the script", async () => {
    const etag = (await api.handler(get("/api/analytics/docs/scalar.js"))).headers.etag!
    const revalidated = await api.handler(get("/api/analytics/docs/scalar.js", {}, { "if-none-match": `"stale", W/${etag}` }))
    expect(revalidated.status).toBe(304)
    expect(revalidated.body).toBeNull()
    expect(revalidated.headers.etag).toBe(etag)
    const stale = await api.handler(get("/api/analytics/docs/scalar.js", {}, { "if-none-match": "\"stale\"" }))
    expect(stale.status).toBe(200)
  })
})

describe("buildDocsHtml", () => {
  it("points Scalar at the given OpenAPI URL, escaping it, and loads the script beside a page at docs.path", () => {
    const html = buildDocsHtml("/spec?x=1&y=\"2\"", { title: "Mine", path: "/reference" })
    const [config, script] = scriptTags(html)
    expect(unescapeAttribute(config!.attributes["data-url"]!)).toBe("/spec?x=1&y=\"2\"")
    expect(script!.attributes.src).toBe("reference/scalar.js")
    expect(html).toContain("<title>Mine</title>")
    expect(scriptTags(buildDocsHtml("/openapi.json"))[1]!.attributes.src).toBe("docs/scalar.js")
    expect(scriptTags(buildDocsHtml("/openapi.json", { scriptUrl: "/assets/scalar.js" }))[1]!.attributes.src).toBe("/assets/scalar.js")
  })
})
