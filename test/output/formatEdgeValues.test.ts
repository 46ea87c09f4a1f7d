/**
 * Regression: values JSON writes as null broke the other formats. CSV answered 500 for an invalid
 * Date (mysql2's zero dates: `toISOString` throws), and NDJSON wrote the text `undefined` as the line
 * of an element JSON cannot write (a function, a symbol, a `toJSON` giving undefined).
 */
import { defineServe } from "queryserve"
import { describe, expect, it } from "vitest"

const api = defineServe({
  queries: {
    dates: () => [
      { id: 1, at: new Date(Number.NaN) },
      { id: 2, at: new Date("2025-01-02T00:00:00.000Z") }
    ],
    odd: () => [1, () => 2, Symbol("s"), { toJSON: () => undefined }, undefined, 2n, { a: () => 1, b: 2 }]
  }
})

const get = (path: string, headers: Record<string, string> = {}) =>
  Promise.resolve(api.handler({ method: "GET", path: `/api/analytics/${path}`, headers, remoteAddress: "198.51.100.1" }))

describe("edge values in CSV and NDJSON", () => {
  it("writes an invalid Date as an empty CSV field, as JSON writes it null", async () => {
    expect(JSON.parse((await get("dates")).body!)).toEqual([{ id: 1, at: null }, { id: 2, at: "2025-01-02T00:00:00.000Z" }])
    for (const response of [await get("dates.csv"), await get("dates", { accept: "text/csv" })]) {
      expect(response.status).toBe(200)
      expect(response.body).toBe("id,at\r\n1,\r\n2,2025-01-02T00:00:00.000Z\r\n")
    }
  })

  it("writes null in NDJSON where JSON cannot write an element, as JSON.stringify does inside an array", async () => {
    const json = await get("odd")
    expect(JSON.parse(json.body!)).toEqual([1, null, null, null, null, 2, { b: 2 }])
    const ndjson = await get("odd.ndjson")
    expect(ndjson.status).toBe(200)
    expect(ndjson.body).toBe("1\nnull\nnull\nnull\nnull\n2\n{\"b\":2}\n")
  })
})
