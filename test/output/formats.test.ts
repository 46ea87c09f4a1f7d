import { defineServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const rows = [
  { region: "eu", note: 'said "hi", left', total: 10, active: true, day: new Date("2025-01-02T00:00:00.000Z") },
  { region: "us", note: "two\nlines", total: 2.5, active: false, extra: null },
  { region: "apac", total: 12345678901234567890n }
]

describe("CSV and NDJSON output over a real server", () => {
  const api = defineServe({
    queries: {
      rows: () => rows,
      empty: () => [],
      notFinite: () => [{ ratio: Number.NaN }, { ratio: Number.POSITIVE_INFINITY }, { ratio: 0.5 }],
      nested: () => [{ region: "eu", breakdown: { a: 1 } }],
      single: () => ({ total: 1 }),
      report: { method: "POST", query: () => rows }
    }
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}/api/analytics/${path}`, { headers })

  const expectedCsv =
    "region,note,total,active,day,extra\r\n" +
    'eu,"said ""hi"", left",10,true,2025-01-02T00:00:00.000Z,\r\n' +
    'us,"two\nlines",2.5,false,,\r\n' +
    "apac,,12345678901234567890,,,\r\n"

  it("gives RFC 4180 CSV for Accept: text/csv, with a header of every column in first-seen order", async () => {
    const response = await get("rows", { accept: "text/csv" })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present")
    expect(await response.text()).toBe(expectedCsv)
  })

  it("gives the same CSV on the .csv route, whatever Accept says", async () => {
    const response = await get("rows.csv", { accept: "application/json" })
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present")
    expect(await response.text()).toBe(expectedCsv)
  })

  it("gives one JSON document per line for NDJSON, by Accept and by the .ndjson route", async () => {
    const expected =
      '{"region":"eu","note":"said \\"hi\\", left","total":10,"active":true,"day":"2025-01-02T00:00:00.000Z"}\n' +
      '{"region":"us","note":"two\\nlines","total":2.5,"active":false,"extra":null}\n' +
      '{"region":"apac","total":"12345678901234567890"}\n'
    const byAccept = await get("rows", { accept: "application/x-ndjson" })
    expect(byAccept.headers.get("content-type")).toBe("application/x-ndjson")
    expect(await byAccept.text()).toBe(expected)
    const bySuffix = await get("rows.ndjson")
    expect(await bySuffix.text()).toBe(expected)
    expect(bySuffix.headers.get("x-request-id")).toBeTruthy()
  })

  it("picks by q-value and falls back to JSON for what it does not produce", async () => {
    const preferred = await get("rows", { accept: "application/json;q=0.5, text/csv" })
    expect(preferred.headers.get("content-type")).toMatch(/^text\/csv/)
    const jsonFirst = await get("rows", { accept: "text/csv;q=0.2, application/json" })
    expect(jsonFirst.headers.get("content-type")).toBe("application/json; charset=utf-8")
    // q is at most 1: a CSV claiming more does not outrank the JSON asked for first.
    const capped = await get("rows", { accept: "application/json, text/csv;q=2" })
    expect(capped.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const unknown = await get("rows", { accept: "text/html" })
    expect(unknown.headers.get("content-type")).toBe("application/json; charset=utf-8")
  })

  it("matches media types case-insensitively, in Accept and in the Content-Type of a body", async () => {
    const csv = await get("rows", { accept: "TEXT/CSV" })
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present")
    expect(await csv.text()).toBe(expectedCsv)
    const ndjson = await get("rows", { accept: "Application/JSON;Q=0.5, Application/X-NDJSON" })
    expect(ndjson.headers.get("content-type")).toBe("application/x-ndjson")
    const report = (contentType: string, body: string) =>
      fetch(`${server.url}/api/analytics/report`, { method: "POST", headers: { accept: "Text/Csv", "content-type": contentType }, body })
    for (const [contentType, body] of [["APPLICATION/JSON; Charset=UTF-8", "{}"], ["Application/X-WWW-Form-Urlencoded", "a=1"]] as const) {
      const answer = await report(contentType, body)
      expect(answer.status).toBe(200)
      expect(await answer.text()).toBe(expectedCsv)
    }
  })

  it("answers 406 VALIDATION_ERROR for a result that is not an array of flat rows", async () => {
    for (const [path, reason] of [
      ["nested.csv", 'column "breakdown" holds nested data'],
      ["single.csv", "it is not an array of rows"]
    ]) {
      const response = await get(path!)
      expect(response.status).toBe(406)
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expect(await response.json()).toEqual({
        error: {
          type: "VALIDATION_ERROR",
          message: `This result cannot be given as CSV: ${reason}. Ask for application/json instead.`,
          details: { available: ["application/json"] }
        }
      })
    }
    expect((await get("single", { accept: "application/x-ndjson" })).status).toBe(406)
  })

  it("answers JSON instead of a 406 when Accept takes JSON too", async () => {
    for (const accept of ["text/csv, application/json;q=0.9", "application/x-ndjson, */*;q=0.1"]) {
      const response = await get("single", { accept })
      expect([accept, response.status, response.headers.get("content-type"), await response.json()])
        .toEqual([accept, 200, "application/json; charset=utf-8", { total: 1 }])
    }
    expect((await get("single", { accept: "text/csv, application/json;q=0" })).status).toBe(406)
    // A result CSV can hold is still CSV.
    expect((await get("rows", { accept: "text/csv, application/json;q=0.9" })).headers.get("content-type")).toMatch(/^text\/csv/)
  })

  it("writes NaN and Infinity as empty cells, as JSON writes them null", async () => {
    expect(await (await get("notFinite")).json()).toEqual([{ ratio: null }, { ratio: null }, { ratio: 0.5 }])
    expect(await (await get("notFinite.csv")).text()).toBe("ratio\r\n\r\n\r\n0.5\r\n")
  })

  it("gives an empty CSV for no rows, and registers suffixes only for GET endpoints", async () => {
    const empty = await get("empty.csv")
    expect(empty.status).toBe(200)
    expect(await empty.text()).toBe("")
    expect((await fetch(`${server.url}/api/analytics/report.csv`, { method: "POST" })).status).toBe(404)
    const report = await fetch(`${server.url}/api/analytics/report`, { method: "POST", headers: { accept: "text/csv" } })
    expect(await report.text()).toBe(expectedCsv)
  })

  it("reports a 406 as an error event with its status", async () => {
    const statuses: Array<[string, number | undefined]> = []
    const off = api.queryLogger.on((event) => statuses.push([event.status, event.responseStatus]))
    await (await get("nested.csv")).text()
    off()
    expect(statuses).toEqual([["started", undefined], ["error", 406]])
  })
})
