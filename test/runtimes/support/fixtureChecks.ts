import { createHash } from "node:crypto"
import { expect } from "vitest"
import { API_KEY, EXPORT_ROWS, STREAMED_ROWS, streamedRow } from "../fixture/api.js"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const sha256Tag = (body: string): string => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`

/** The tag of `body`; weak when the answer was compressed (it then names the encoded copy's content only loosely). */
const expectedEtag = (response: Response, body: string): string =>
  response.headers.get("content-encoding") === null ? sha256Tag(body) : `W/${sha256Tag(body)}`

const withKey = (headers: Record<string, string> = {}): Record<string, string> => ({ "x-api-key": API_KEY, ...headers })

interface StreamEnds {
  readonly complete: number
  readonly cancelled: number
  readonly rowsOfLastCancelled: number
  readonly signalAborted: number
}

const streamEnds = async (base: string): Promise<StreamEnds> =>
  (await (await fetch(`${base}/api/streamEnds`, { headers: withKey() })).json()) as StreamEnds

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The lines of a streamed NDJSON or CSV body, checked to end with a line break. */
const linesOf = (body: string, separator: string): Array<string> => {
  expect(body.endsWith(separator)).toBe(true)
  return body.slice(0, -separator.length).split(separator)
}

const errorOf = async (response: Response): Promise<{ type: string; details?: Record<string, unknown> }> =>
  ((await response.json()) as { error: { type: string; details?: Record<string, unknown> } }).error

/** What every runtime must answer for the fixture API (test/runtimes/fixture/api.ts) served at `base`. */
export const FIXTURE_CHECKS: ReadonlyArray<readonly [name: string, check: (base: string) => Promise<void>]> = [
  ["answers an authenticated GET with JSON, a generated request id and a SHA-256 ETag", async (base) => {
    const response = await fetch(`${base}/api/revenue?region=eu`, { headers: withKey() })
    const body = await response.text()
    expect(response.status).toBe(200)
    expect(JSON.parse(body)).toEqual({ region: "eu", total: 42 })
    expect(response.headers.get("x-request-id")).toMatch(UUID)
    expect(response.headers.get("etag")).toBe(sha256Tag(body))
    const again = await fetch(`${base}/api/revenue?region=eu`, { headers: withKey({ "if-none-match": response.headers.get("etag")! }) })
    expect(again.status).toBe(304)
  }],
  ["refuses a missing key and an unknown one with 401", async (base) => {
    const missing = await fetch(`${base}/api/revenue?region=eu`)
    expect(missing.status).toBe(401)
    expect(await errorOf(missing)).toMatchObject({ type: "UNAUTHORIZED", details: { reason: "missing_credentials" } })
    const unknown = await fetch(`${base}/api/revenue?region=eu`, { headers: { "x-api-key": `${API_KEY}-not` } })
    expect(unknown.status).toBe(401)
    expect(await errorOf(unknown)).toMatchObject({ type: "UNAUTHORIZED", details: { reason: "invalid_credentials" } })
  }],
  ["validates query and JSON-body input (400) and answers a valid POST", async (base) => {
    const badRegion = await fetch(`${base}/api/revenue?region=mars`, { headers: withKey() })
    expect(badRegion.status).toBe(400)
    expect((await errorOf(badRegion)).type).toBe("VALIDATION_ERROR")
    const post = (body: string) =>
      fetch(`${base}/api/report`, { method: "POST", headers: withKey({ "content-type": "application/json" }), body })
    const valid = await post(JSON.stringify({ region: "us", limit: 2 }))
    expect(valid.status).toBe(200)
    expect(await valid.json()).toEqual([{ region: "us", rank: 1 }, { region: "us", rank: 2 }])
    for (const invalid of [JSON.stringify({ region: "us", limit: 0 }), "{\"region\":"]) {
      const response = await post(invalid)
      expect(response.status).toBe(400)
      expect((await errorOf(response)).type).toBe("VALIDATION_ERROR")
    }
  }],
  ["tags a large answer with the same SHA-256 (by Web Crypto in the web build), compressed or not", async (base) => {
    for (const encoding of ["identity", "gzip"]) {
      const response = await fetch(`${base}/api/export`, { headers: withKey({ "accept-encoding": encoding }) })
      const body = await response.text()
      expect(body.length).toBeGreaterThan(16 * 1024)
      expect(JSON.parse(body)).toEqual(EXPORT_ROWS)
      expect(response.headers.get("content-encoding")).toBe(encoding === "gzip" ? "gzip" : null)
      expect(response.headers.get("etag")).toBe(expectedEtag(response, body))
    }
  }],
  // The runtime derives the framing of a body-less answer itself; the headers must still be the GET's.
  ["answers HEAD with the GET's headers and no body, compressed or not", async (base) => {
    for (const encoding of ["identity", "gzip"]) {
      const headers = withKey({ "accept-encoding": encoding })
      const get = await fetch(`${base}/api/export`, { headers })
      const getBody = await get.text()
      const head = await fetch(`${base}/api/export`, { method: "HEAD", headers })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe("")
      for (const name of ["content-type", "content-encoding", "etag", "vary", "cache-control"]) {
        expect([name, head.headers.get(name)]).toEqual([name, get.headers.get(name)])
      }
      expect(head.headers.get("etag")).toBe(expectedEtag(get, getBody))
      expect(head.headers.get("x-request-id")).toMatch(UUID)
    }
    const refused = await fetch(`${base}/api/export`, { method: "HEAD" })
    expect(refused.status).toBe(401)
    expect(await refused.text()).toBe("")
  }],
  ["serves the OpenAPI document", async (base) => {
    const response = await fetch(`${base}/api/openapi.json`)
    expect(response.status).toBe(200)
    const document = (await response.json()) as { openapi: string; info: { title: string }; paths: Record<string, unknown> }
    expect(document.openapi).toBe("3.1.0")
    expect(document.info.title).toBe("Runtime fixture")
    expect(Object.keys(document.paths).sort()).toEqual(["/api/export", "/api/report", "/api/revenue", "/api/streamEnds", "/api/streamed"])
  }],
  ["serves the docs page and Scalar's script beside it", async (base) => {
    const page = await fetch(`${base}/api/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const html = await page.text()
    const src = /<script src="([^"]+)"><\/script>/.exec(html)?.[1]
    expect(src).toMatch(/^\.\/docs\/scalar\.js\?v=[\w-]{27}$/)
    const script = await fetch(new URL(src!.replace(/&amp;/g, "&"), `${base}/api/docs`))
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    const text = await script.text()
    expect(text.length).toBeGreaterThan(1_000_000)
    expect(text).toContain("@scalar/api-reference")
    expect(script.headers.get("etag")).toBe(expectedEtag(script, text))
    expect(`"${new URL(src!, base).searchParams.get("v")}"`).toBe(sha256Tag(text))
  }],
  ["serves the endpoints as MCP tools: 401 without a key, tools/list and tools/call with one", async (base) => {
    const mcp = (body: unknown, headers: Record<string, string>) =>
      fetch(`${base}/api/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body)
      })
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    expect((await mcp(list, {})).status).toBe(401)
    const listed = (await (await mcp(list, withKey())).json()) as { result: { tools: Array<{ name: string }> } }
    expect(listed.result.tools.map((tool) => tool.name).sort()).toEqual(["export", "report", "revenue", "streamEnds", "streamed"])
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "revenue", arguments: { region: "apac" } } }
    const called = (await (await mcp(call, withKey())).json()) as { result: { content: Array<{ text: string }>; isError?: boolean } }
    expect(called.result.isError).toBeUndefined()
    expect(JSON.parse(called.result.content[0]!.text)).toEqual({ region: "apac", total: 42 })
  }],
  ["streams 50,000 rows of an async generator as JSON, NDJSON and CSV, unbuffered", async (base) => {
    const [first, last] = [streamedRow(0), streamedRow(STREAMED_ROWS - 1)]
    const before = await streamEnds(base)
    const json = await fetch(`${base}/api/streamed`, { headers: withKey() })
    expect(json.status).toBe(200)
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(json.headers.get("content-length")).toBeNull()
    expect(json.headers.get("etag")).toBeNull()
    const rows = (await json.json()) as Array<unknown>
    expect([rows.length, rows[0], rows.at(-1)]).toEqual([STREAMED_ROWS, first, last])

    const ndjson = await fetch(`${base}/api/streamed.ndjson`, { headers: withKey() })
    expect(ndjson.headers.get("content-type")).toMatch(/^application\/x-ndjson/)
    const lines = linesOf(await ndjson.text(), "\n")
    expect([lines.length, JSON.parse(lines[0]!), JSON.parse(lines.at(-1)!)]).toEqual([STREAMED_ROWS, first, last])

    const csv = await fetch(`${base}/api/streamed`, { headers: withKey({ accept: "text/csv" }) })
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/)
    const records = linesOf(await csv.text(), "\r\n")
    expect([records.length, records[0], records[1], records.at(-1)]).toEqual([
      STREAMED_ROWS + 1, "id,label", `0,${first.label}`, `${last.id},${last.label}`
    ])
    const after = await streamEnds(base)
    expect(after.complete - before.complete).toBe(3)
    expect(after.cancelled).toBe(before.cancelled)
  }],
  ["ends the generator (its finally runs, ctx.signal aborts) when the client leaves mid-stream", async (base) => {
    const count = 5_000_000
    const before = await streamEnds(base)
    const controller = new AbortController()
    const response = await fetch(`${base}/api/streamed.ndjson?count=${count}`, { headers: withKey(), signal: controller.signal })
    const reader = response.body!.getReader()
    let read = 0
    while (read < 256 * 1024) read += (await reader.read()).value!.byteLength
    controller.abort()
    let after = before
    for (let waited = 0; after.cancelled === before.cancelled && waited < 5_000; waited += 20) {
      await sleep(20)
      after = await streamEnds(base)
    }
    expect(after.cancelled - before.cancelled).toBe(1)
    expect(after.signalAborted - before.signalAborted).toBe(1)
    // Pulled as the client read, not to the end: the 256 KiB read (about 8,000 rows) plus the buffers
    // on the way, which stay far under 3 MB.
    expect(after.rowsOfLastCancelled).toBeLessThan(100_000)
    expect(after.complete).toBe(before.complete)
  }]
]
