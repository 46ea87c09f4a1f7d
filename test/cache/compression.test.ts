import { request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { defineServe, type RunningServer, type ServeResponse } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { get } from "./support/requests.js"

/** About 6 KB of JSON: over the 1 KiB from which answers are compressed. */
const rows = (region: string) => Array.from({ length: 100 }, (_, i) => ({ region, day: i, amount: i * 1.25, note: `row ${i} of ${region}` }))

const makeApi = () => {
  let runs = 0
  const api = defineServe({
    resultCache: true,
    queries: { orders: { cacheTtlMs: 60_000, query: ({ input }: { input: { region?: string } }) => (runs++, rows(input.region ?? "eu")) } }
  })
  return { api, runs: () => runs }
}

const fetchRaw = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; text: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        const wire = Buffer.concat(chunks)
        const coding = res.headers["content-encoding"]
        const text = (coding === "br" ? brotliDecompressSync(wire) : coding === "gzip" ? gunzipSync(wire) : wire).toString("utf8")
        resolve({ status: res.statusCode!, headers: res.headers, text })
      })
    })
    req.on("error", reject)
    req.end()
  })

describe("result cache: compressed answers", () => {
  it("keeps a cached entry's compressed forms with it: every hit of the entry hands the adapters the same store of them", async () => {
    const { api } = makeApi()
    const miss = await api.handler(get("orders", { region: "eu" }))
    const hits: Array<ServeResponse> = [await api.handler(get("orders", { region: "eu" })), await api.handler(get("orders", { region: "eu" }))]
    expect(miss.headers["x-cache"]).toBe("MISS")
    expect(hits.map((hit) => hit.headers["x-cache"])).toEqual(["HIT", "HIT"])
    expect(hits[0]!.compressed).toBeDefined()
    expect(hits[1]!.compressed).toBe(hits[0]!.compressed)
    // Another entry has its own; CSV is shaped per request, so it has none to keep.
    const other = await api.handler(get("orders", { region: "us" }))
    const otherHit = await api.handler(get("orders", { region: "us" }))
    expect(other.headers["x-cache"]).toBe("MISS")
    expect(otherHit.compressed).toBeDefined()
    expect(otherHit.compressed).not.toBe(hits[0]!.compressed)
    const csv = await api.handler(get("orders", { region: "eu" }, { accept: "text/csv" }))
    expect(csv.headers["x-cache"]).toBe("HIT")
    expect(csv.compressed).toBeUndefined()
    // HEAD sends no body, so it carries nothing to compress.
    const head = await api.handler({ ...get("orders", { region: "eu" }), method: "HEAD" })
    expect(head.body).toBeNull()
    expect(head.compressed).toBeUndefined()
  })

  describe("over a real node:http server", () => {
    const { api, runs } = makeApi()
    let server: RunningServer
    beforeAll(async () => {
      server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    })
    afterAll(() => server.stop())

    it("compresses an entry once per coding: later hits send the kept bytes, decoded to the same JSON", async () => {
      const path = "/api/analytics/orders?region=eu"
      const expected = JSON.stringify(rows("eu"))
      const first = await fetchRaw(server.port, path, { "accept-encoding": "br" })
      expect(first.headers["x-cache"]).toBe("MISS")
      expect(first.text).toBe(expected)
      // The entry's store of compressed forms, as the pipeline hands it to the adapter: the miss,
      // answered from the stored entry too, filled it.
      const kept = (await api.handler(get("orders", { region: "eu" }))).compressed
      expect(kept?.br).toBeInstanceOf(Uint8Array)
      const keptBr = kept?.br
      const hit = await fetchRaw(server.port, path, { "accept-encoding": "br" })
      expect(hit.headers["x-cache"]).toBe("HIT")
      expect(hit.headers["content-encoding"]).toBe("br")
      expect(hit.headers.etag).toMatch(/^W\//)
      expect(hit.text).toBe(expected)
      expect(kept?.br).toBe(keptBr)
      expect(kept?.gzip).toBeUndefined()
      const gzip = await fetchRaw(server.port, path, { "accept-encoding": "gzip" })
      expect(gzip.headers["content-encoding"]).toBe("gzip")
      expect(gzip.text).toBe(expected)
      expect(kept?.gzip).toBeInstanceOf(Uint8Array)
      const again = await fetchRaw(server.port, path, { "accept-encoding": "gzip, br" })
      expect(again.headers["content-encoding"]).toBe("br")
      expect(again.text).toBe(expected)
      expect(kept?.br).toBe(keptBr)
      const identity = await fetchRaw(server.port, path, {})
      expect(identity.headers["content-encoding"]).toBeUndefined()
      expect(identity.text).toBe(expected)
      expect(runs()).toBe(1)
    })

    it("keeps each compressed form in memory of its own size, and the memory store counts it against maxBytes", async () => {
      const path = "/api/analytics/orders?region=apac"
      await fetchRaw(server.port, path, {})
      const counted = (await api.cache.stats()).bytes
      await fetchRaw(server.port, path, { "accept-encoding": "br" })
      await fetchRaw(server.port, path, { "accept-encoding": "gzip" })
      const kept = (await api.handler(get("orders", { region: "apac" }))).compressed
      const forms = [kept?.br, kept?.gzip].map((form) => {
        if (!(form instanceof Uint8Array)) throw new Error("expected a kept compressed form")
        return form
      })
      // zlib hands out views of its 16 KiB output buffer: a kept view would hold all of it.
      for (const form of forms) expect(form.buffer.byteLength).toBe(form.byteLength)
      const keptBytes = forms[0]!.byteLength + forms[1]!.byteLength
      expect((await api.cache.stats()).bytes).toBeGreaterThanOrEqual(counted + keptBytes)
    })
  })
})
