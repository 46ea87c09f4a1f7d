import { request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { createFetchHandler, defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** Rows whose JSON is about 60 KB: `limit` of them, as an export would give. */
const rowsOf = (limit: number) =>
  Array.from({ length: limit }, (_, i) => ({ order_id: i, day: `2025-03-${String((i % 28) + 1).padStart(2, "0")}`, region: ["na", "emea"][i % 2], amount: i * 1.5 }))

const api = defineServe({
  queries: {
    orders: { cacheTtlMs: 60_000, query: ({ input }: { input: { limit?: string } }) => rowsOf(Number(input.limit ?? 1000)) },
    small: () => ({ ok: true, note: "well under a kilobyte" }),
    raw: { query: ({ ctx }: { ctx: { setHeader(name: string, value: string): void } }) => (ctx.setHeader("cache-control", "no-transform"), rowsOf(200)) }
  }
})

interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The bytes as they came over the wire. */
  readonly wire: Buffer
  /** The body once its Content-Encoding is undone. */
  readonly text: string
}

const decode = (wire: Buffer, coding: unknown): string =>
  (wire.length === 0 ? wire : coding === "br" ? brotliDecompressSync(wire) : coding === "gzip" ? gunzipSync(wire) : wire).toString("utf8")

describe("compression over a real node:http server", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())

  /** A raw request (fetch would decode the body and hide the bytes). */
  const call = (path: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawAnswer> =>
    new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: server.port, path: `/api/analytics/${path}`, method, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const wire = Buffer.concat(chunks)
          resolve({ status: res.statusCode!, headers: res.headers, wire, text: decode(wire, res.headers["content-encoding"]) })
        })
      })
      req.on("error", reject)
      req.end()
    })

  it("answers a text body over 1 KiB in br, then gzip, by Accept-Encoding and its q-values", async () => {
    const identity = await call("orders")
    expect(identity.headers["content-encoding"]).toBeUndefined()
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["GZIP", "gzip"],
      ["x-gzip", "gzip"],
      ["br;q=0.5, gzip", "gzip"],
      ["br;q=1.0, gzip;q=0.9", "br"],
      ["*", "br"],
      ["br;q=0, *;q=0.2", "gzip"],
      ["identity", undefined],
      ["deflate", undefined],
      ["br;q=0, gzip;q=0, identity;q=0", undefined],
      ["", undefined]
    ]
    for (const [acceptEncoding, expected] of cases) {
      const answer = await call("orders", { "accept-encoding": acceptEncoding })
      expect(answer.headers["content-encoding"], acceptEncoding).toBe(expected)
      expect(answer.text, acceptEncoding).toBe(identity.text)
      expect(answer.headers.vary, acceptEncoding).toBe("Accept, Accept-Encoding")
      expect(Number(answer.headers["content-length"]), acceptEncoding).toBe(answer.wire.length)
    }
    const br = await call("orders", { "accept-encoding": "br" })
    console.log(`[compression] ${identity.wire.length} bytes of JSON: br ${br.wire.length}, gzip ${(await call("orders", { "accept-encoding": "gzip" })).wire.length}`)
    expect(br.wire.length * 4).toBeLessThan(identity.wire.length)
  })

  it("gives a compressed answer a weak ETag, and revalidates either copy with 304 and no compression", async () => {
    const identity = await call("orders")
    const compressed = await call("orders", { "accept-encoding": "br" })
    const strong = identity.headers.etag as string
    expect(strong).toMatch(/^"[\w-]+"$/)
    expect(compressed.headers.etag).toBe(`W/${strong}`)
    const heldCompressed = await call("orders", { "accept-encoding": "br", "if-none-match": `W/${strong}` })
    expect(heldCompressed.status).toBe(304)
    expect(heldCompressed.wire.length).toBe(0)
    expect(heldCompressed.headers["content-encoding"]).toBeUndefined()
    expect(heldCompressed.headers.etag).toBe(`W/${strong}`)
    expect(heldCompressed.headers.vary).toBe("Accept, Accept-Encoding")
    const heldIdentity = await call("orders", { "if-none-match": strong })
    expect(heldIdentity.status).toBe(304)
    expect(heldIdentity.headers.etag).toBe(strong)
  })

  it("leaves small answers, no-transform answers and bodies at the threshold alone; a HEAD has its GET's headers and no body", async () => {
    const small = await call("small", { "accept-encoding": "br, gzip" })
    expect(small.headers["content-encoding"]).toBeUndefined()
    expect(small.headers.vary).toBeUndefined()
    const get = await call("orders", { "accept-encoding": "br" })
    const head = await call("orders", { "accept-encoding": "br" }, "HEAD")
    expect(head.status).toBe(200)
    expect(head.wire.length).toBe(0)
    for (const name of ["content-encoding", "vary", "etag", "content-type", "cache-control"]) expect(head.headers[name]).toBe(get.headers[name])
    expect(head.headers["content-encoding"]).toBe("br")
    const plainHead = await call("orders", {}, "HEAD")
    expect(plainHead.headers["content-length"]).toBe(String(Buffer.byteLength(get.text)))
    expect(plainHead.headers.vary).toBe(get.headers.vary)
    expect(plainHead.headers["content-encoding"]).toBeUndefined()
    const raw = await call("raw", { "accept-encoding": "br" })
    expect(raw.headers["content-encoding"]).toBeUndefined()
    // One row is ~70 bytes of JSON: find a limit at or just under 1,024 bytes, and one just over.
    let limit = 1
    while ((await call(`orders?limit=${limit + 1}`)).wire.length <= 1024) limit++
    const atThreshold = await call(`orders?limit=${limit}`, { "accept-encoding": "br" })
    expect(atThreshold.wire.length).toBeLessThanOrEqual(1024)
    expect(atThreshold.headers["content-encoding"]).toBeUndefined()
    expect((await call(`orders?limit=${limit + 1}`, { "accept-encoding": "br" })).headers["content-encoding"]).toBe("br")
  })

  it("compresses CSV and the docs script; the script once, kept for every later request", async () => {
    const csv = await call("orders.csv", { "accept-encoding": "gzip" })
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/)
    expect(csv.headers["content-encoding"]).toBe("gzip")
    expect(csv.text.split("\r\n")[0]).toBe("order_id,day,region,amount")
    const script = "docs/scalar.js"
    const started = performance.now()
    const first = await call(script, { "accept-encoding": "br, gzip" })
    const firstMs = performance.now() - started
    expect(first.headers["content-encoding"]).toBe("br")
    expect(first.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
    const again = performance.now()
    const second = await call(script, { "accept-encoding": "br, gzip" })
    const secondMs = performance.now() - again
    expect(second.wire.equals(first.wire)).toBe(true)
    // The script's own asset holds the compressed bytes: every answer shares them.
    const kept = (await api.handler({ method: "GET", path: `/api/analytics/${script}` })).compressed
    expect(kept?.br).toBeDefined()
    expect(Buffer.from(await kept!.br!).equals(first.wire)).toBe(true)
    console.log(`[compression] docs script ${first.text.length} bytes → br ${first.wire.length}; first answer ${firstMs.toFixed(0)} ms, second ${secondMs.toFixed(0)} ms`)
  })
})

describe("compression in the fetch adapter (CompressionStream)", () => {
  const handle = createFetchHandler(api.handler)
  const brotliStream = (() => {
    try {
      new CompressionStream("br" as CompressionFormat)
      return true
    } catch {
      return false
    }
  })()

  it("answers gzip (and br where the runtime's CompressionStream has it), with Vary and a weak ETag", async () => {
    const identity = await handle(new Request("http://x.test/api/analytics/orders"))
    const text = await identity.text()
    const gzip = await handle(new Request("http://x.test/api/analytics/orders", { headers: { "accept-encoding": "gzip" } }))
    expect(gzip.headers.get("content-encoding")).toBe("gzip")
    expect(gzip.headers.get("vary")).toBe("Accept, Accept-Encoding")
    expect(gzip.headers.get("etag")).toBe(`W/${identity.headers.get("etag")}`)
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString("utf8")).toBe(text)
    const both = await handle(new Request("http://x.test/api/analytics/orders", { headers: { "accept-encoding": "br, gzip" } }))
    expect(both.headers.get("content-encoding")).toBe(brotliStream ? "br" : "gzip")
    const brOnly = await handle(new Request("http://x.test/api/analytics/orders", { headers: { "accept-encoding": "br" } }))
    expect(brOnly.headers.get("content-encoding")).toBe(brotliStream ? "br" : null)
    const small = await handle(new Request("http://x.test/api/analytics/small", { headers: { "accept-encoding": "gzip" } }))
    expect(small.headers.get("content-encoding")).toBeNull()
  })

  it("compresses the docs script once and answers it with its length", async () => {
    const get = () => handle(new Request("http://x.test/api/analytics/docs/scalar.js", { headers: { "accept-encoding": "gzip" } }))
    const first = await get()
    const bytes = Buffer.from(await first.arrayBuffer())
    expect(first.headers.get("content-encoding")).toBe("gzip")
    expect(Number(first.headers.get("content-length"))).toBe(bytes.length)
    expect(gunzipSync(bytes).toString("utf8")).toContain("@scalar/api-reference")
    expect(Buffer.from(await (await get()).arrayBuffer()).equals(bytes)).toBe(true)
  })
})
