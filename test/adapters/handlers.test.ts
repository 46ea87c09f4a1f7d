import { createFetchHandler, createNodeHandler, defineServe } from "queryserve"
import { createServer, type RequestListener } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const api = defineServe({
  queries: {
    echo: { method: "POST", query: ({ input }: { input: unknown }) => ({ received: input }) },
    revenue: ({ input }: { input: unknown }) => ({ query: input })
  }
})

/** A node:http server on a loopback port for the enclosing describe block; `base()` is its API URL. */
const onLoopback = (listener: RequestListener): { base: () => string } => {
  const server = createServer(listener)
  let base = ""
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/analytics`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return { base: () => base }
}

describe("node adapter over a real server", () => {
  const served = onLoopback(createNodeHandler(api.handler))
  let base = ""
  beforeAll(() => void (base = served.base()))

  it("parses the query string, repeated keys as arrays", async () => {
    const response = await fetch(`${base}/revenue?region=eu&region=us&from=2025-01-01&q=a%20b+c`)
    expect(await response.json()).toEqual({ query: { region: ["eu", "us"], from: "2025-01-01", q: "a b c" } })
  })

  it("reads JSON and form bodies, and falls back to the query string on an empty body", async () => {
    const json = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2]}' })
    expect(await json.json()).toEqual({ received: { a: [1, 2] } })
    const form = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=1&b=x%20y" })
    expect(await form.json()).toEqual({ received: { a: "1", b: "x y" } })
    const empty = await fetch(`${base}/echo?fallback=1`, { method: "POST" })
    expect(await empty.json()).toEqual({ received: { fallback: "1" } })
  })

  it("turns malformed JSON into 400 VALIDATION_ERROR naming the body", async () => {
    const response = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":' })
    expect(response.status).toBe(400)
    expect(response.headers.get("x-request-id")).toBeTruthy()
    const body = await response.json()
    expect(body.error.type).toBe("VALIDATION_ERROR")
    expect(body.error.details.issues[0].path).toEqual(["body"])
  })

  it("keeps __proto__ keys of a JSON body away from prototypes", async () => {
    const response = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":true}},"ok":1}'
    })
    expect(await response.json()).toEqual({ received: { nested: {}, ok: 1 } })
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
    // The same key written with escapes is the same key once parsed.
    for (const key of ["\\u005f_proto__", "__pr\\u006fto__", "\\u005F\\u005Fproto\\u005F\\u005F"]) {
      const escaped = await fetch(`${base}/echo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"${key}":{"polluted":true},"nested":{"${key}":{"polluted":true}},"ok":1}`
      })
      expect([key, await escaped.json()]).toEqual([key, { received: { nested: {}, ok: 1 } }])
    }
  })

  it("rejects an unsupported content type with 400", async () => {
    const response = await fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "text/xml" }, body: "<a/>" })
    expect(response.status).toBe(400)
    expect((await response.json()).error.message).toMatch(/Unsupported content type/)
  })

  it("reads the body by its media type, whatever its parameters, and no type that merely begins like JSON", async () => {
    const send = (contentType: string) => fetch(`${base}/echo`, { method: "POST", headers: { "content-type": contentType }, body: '{"a":1}' })
    for (const json of ["application/json", "Application/JSON ; charset=utf-8", "application/problem+json", "application/vnd.api+json;v=2"]) {
      expect(await (await send(json)).json()).toEqual({ received: { a: 1 } })
    }
    for (const other of ["application/jsonx", "application/json-seq", "text/plain; note=+json"]) {
      expect((await send(other)).status).toBe(400)
    }
  })

  it("reads a body declared UTF-8 (or with no charset), and refuses one in another charset rather than misread it", async () => {
    const send = (contentType: string) =>
      fetch(`${base}/echo`, { method: "POST", headers: { "content-type": contentType }, body: Buffer.from('{"city":"Zürich"}', "latin1") })
    for (const utf8 of ["application/json; charset=utf-8", 'application/json; charset="UTF-8"', "application/json; charset=utf8"]) {
      expect((await send(utf8)).status).toBe(200)
    }
    for (const other of ["application/json; charset=iso-8859-1", "application/x-www-form-urlencoded; charset=windows-1252"]) {
      const refused = await send(other)
      expect([other, refused.status, (await refused.json()).error.message]).toEqual([other, 400, expect.stringMatching(/^Unsupported charset ".+": send the body in UTF-8$/)])
    }
  })

  it("answers unknown routes with the 404 envelope", async () => {
    const response = await fetch(`${base}/missing`)
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: { type: "NOT_FOUND", message: "No route for GET /api/analytics/missing" } })
  })
})

describe("createNodeHandler's listener, awaited by its caller", () => {
  const slow = defineServe({
    queries: { slow: () => new Promise((resolve) => setTimeout(() => resolve("late"), 50)), fast: () => "now" }
  })
  const listener = createNodeHandler(slow.handler)
  const finishedWhenSettled: Array<boolean> = []
  const served = onLoopback(async (req, res) => {
    await listener(req, res)
    finishedWhenSettled.push(res.writableFinished)
  })
  let base = ""
  beforeAll(() => void (base = served.base()))

  it("returns a promise that settles once the response is written, sync or async, and when the client left", async () => {
    expect(await (await fetch(`${base}/fast`)).json()).toBe("now")
    expect(await (await fetch(`${base}/slow`)).json()).toBe("late")
    const gone = new AbortController()
    const aborted = fetch(`${base}/slow`, { signal: gone.signal }).catch(() => "aborted")
    setTimeout(() => gone.abort(), 10)
    expect(await aborted).toBe("aborted")
    await expect.poll(() => finishedWhenSettled.length, { timeout: 5_000 }).toBe(3)
    expect(finishedWhenSettled.slice(0, 2)).toEqual([true, true])
  })
})

describe("fetch adapter", () => {
  const handle = createFetchHandler(api.handler)

  it("answers a Request with a Response", async () => {
    const response = await handle(new Request("http://x.test/api/analytics/revenue?a=1&a=2", { headers: { "x-request-id": "f-1" } }))
    expect(response.status).toBe(200)
    expect(response.headers.get("x-request-id")).toBe("f-1")
    expect(await response.json()).toEqual({ query: { a: ["1", "2"] } })
  })

  it("reads JSON bodies and maps malformed JSON and unknown routes to envelopes", async () => {
    const ok = await handle(new Request("http://x.test/api/analytics/echo", { method: "POST", body: '{"n":1}', headers: { "content-type": "application/json" } }))
    expect(await ok.json()).toEqual({ received: { n: 1 } })
    const bad = await handle(new Request("http://x.test/api/analytics/echo", { method: "POST", body: "{", headers: { "content-type": "application/json" } }))
    expect(bad.status).toBe(400)
    const missing = await handle(new Request("http://x.test/nowhere"))
    expect(missing.status).toBe(404)
    expect((await missing.json()).error.type).toBe("NOT_FOUND")
  })
})
