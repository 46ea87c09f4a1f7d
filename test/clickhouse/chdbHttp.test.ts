/**
 * `@clickhouse/client` against a ClickHouse engine: the test front over chDB (test/support/chdbHttp.ts)
 * speaking ClickHouse's HTTP interface. Values bound as typed parameters come back as sent, settings
 * and the database hold for their query alone, errors arrive as the client's ClickHouseError, a
 * client that leaves stops its query; and the demo, loaded and served through the client, answers
 * as over DuckDB.
 */
import { type ClickHouseClient, ClickHouseError, createClient } from "@clickhouse/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDb } from "../../examples/analytics/sql.js"
import { clickHouseDriver, clickHouseTarget, serverExecutor } from "../../examples/clickhouse/clickhouse.js"
import { toServeError } from "../../src/domain/errors.js"
import { type CrossCheck, itAnswersLikeDuckDb, prepareCrossCheck } from "../demo/support/crossCheck.js"
import { METRIC_CASES } from "../demo/support/references.js"
import { findChdbForTests } from "../support/chdb.js"
import { type ChdbDatabase, QUIET, startChdbDatabase } from "../support/chdbDatabase.js"
import { type ChdbHttp, startChdbHttp, unescapeParam } from "../support/chdbHttp.js"
import { settledWithin } from "../support/settledWithin.js"

const ROWS = 20_000
const DATABASE = "queryserve_demo_test"
const ENDPOINTS = [...new Set(Object.values(METRIC_CASES).map((metric) => metric.endpoint))]

const available = findChdbForTests("@clickhouse/client against chDB's HTTP front") !== undefined

const failureOf = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => "resolved", (error: unknown) => error)

describe("unescapeParam", () => {
  it("reads ClickHouse's escaped text: \\t \\n \\' \\\\ \\xHH, and any other escaped character as itself", () => {
    expect(unescapeParam(String.raw`it\'s\ta\\b\nc\x41\q`)).toBe("it's\ta\\b\ncAq")
  })
})

describe.skipIf(!available)("@clickhouse/client against chDB's HTTP front", () => {
  let chdb: ChdbDatabase
  let front: ChdbHttp
  let client: ClickHouseClient
  let check: CrossCheck

  const rows = async (query: string, query_params?: Record<string, unknown>, on: ClickHouseClient = client) =>
    (await (await on.query({ query, query_params, format: "JSONEachRow" })).json<Record<string, unknown>>())

  beforeAll(async () => {
    chdb = await startChdbDatabase(DATABASE)
    ;({ front, client } = chdb)
    check = await prepareCrossCheck(clickHouseTarget(client), createDb(clickHouseDriver(serverExecutor(client))), undefined, ROWS)
  }, 120_000)

  afterAll(async () => {
    await check?.close()
    await chdb?.close()
  })

  it("answers the client's ping", async () => {
    expect(await client.ping()).toEqual({ success: true })
    expect(await client.ping({ select: true })).toEqual({ success: true })
  })

  describe("parameters", () => {
    const TEXTS = [
      "acme' OR '1'='1",
      "acme\\' OR 1=1 --",
      "back\\slash, tab\t, newline\n, return\r, quote ', double \" and `backquote`",
      "{p0:String} ? $$ -- /* # \\N",
      "Zürich 東京 🦆",
      ""
    ]

    it("binds text as the client sends it, hostile or not", async () => {
      for (const text of TEXTS) expect(await rows("SELECT {v:String} AS v", { v: text }), JSON.stringify(text)).toEqual([{ v: text }])
    })

    it("binds numbers, dates, booleans and NULL by the placeholder's type", async () => {
      const answer = await rows(
        "SELECT {i:Int64} AS i, {f:Float64} AS f, {d:Date} AS d, {t:DateTime('UTC')} AS t, {b:Bool} AS b, {n:Nullable(String)} AS n",
        { i: -42, f: 0.1, d: "2025-02-03", t: "2025-02-03 04:05:06", b: true, n: null }
      )
      expect(answer).toEqual([{ i: -42, f: 0.1, d: "2025-02-03", t: "2025-02-03 04:05:06", b: true, n: null }])
    })

    it("binds arrays, so IN takes a list, its strings read as ClickHouse reads them", async () => {
      const list = ["acme", "it's", "back\\slash", "tab\t"]
      expect(await rows("SELECT {a:Array(String)} AS a, {n:Array(Int64)} AS n", { a: list, n: [1, -2] })).toEqual([{ a: list, n: [1, -2] }])
      const tenants = await rows("SELECT DISTINCT tenant_id FROM orders WHERE tenant_id IN {t:Array(String)} ORDER BY tenant_id", {
        t: ["globex", "acme", "acme' OR '1'='1"]
      })
      expect(tenants).toEqual([{ tenant_id: "acme" }, { tenant_id: "globex" }])
    })
  })

  it("answers in the format asked for, and says which", async () => {
    const json = await client.query({ query: "SELECT 1 AS one", format: "JSON" })
    expect(json.response_headers["x-clickhouse-format"]).toBe("JSON")
    expect(await json.json()).toMatchObject({ meta: [{ name: "one", type: "UInt8" }], data: [{ one: 1 }], rows: 1 })
    const eachRow = await client.query({ query: "SELECT number AS n FROM numbers(2)", format: "JSONEachRow" })
    expect(eachRow.response_headers["x-clickhouse-format"]).toBe("JSONEachRow")
    expect(await eachRow.json()).toEqual([{ n: 0 }, { n: 1 }])
    const csv = await client.query({ query: "SELECT 'a,b' AS s", format: "CSVWithNames" })
    expect(await csv.text()).toBe('"s"\n"a,b"\n')
  })

  it("applies a query's settings and database to that query alone", async () => {
    const big = "SELECT toInt64(9007199254740993) AS n, currentDatabase() AS db"
    const quoted = await client.query({ query: big, format: "JSONEachRow", clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } })
    expect(await quoted.json()).toEqual([{ n: "9007199254740993", db: DATABASE }])
    const other = createClient({ url: front.url, ...QUIET })
    try {
      expect(await rows(big, undefined, other)).toEqual([{ n: 9007199254740993, db: "default" }])
    } finally {
      await other.close()
    }
  })

  it("takes inserts and answers, compressed both ways", async () => {
    const compressing = createClient({ url: front.url, database: DATABASE, compression: { request: true, response: true }, ...QUIET })
    try {
      await compressing.command({ query: "CREATE TABLE compressed (word String) ENGINE = Memory" })
      await compressing.insert({ table: "compressed", values: [{ word: "squeezed" }, { word: "zipped" }], format: "JSONEachRow" })
      const answer = await compressing.query({ query: "SELECT word FROM compressed ORDER BY word", format: "JSONEachRow" })
      expect(answer.response_headers["content-encoding"]).toBe("gzip")
      expect(await answer.json()).toEqual([{ word: "squeezed" }, { word: "zipped" }])
    } finally {
      await compressing.close()
    }
  })

  describe("errors", () => {
    it("arrive as the client's ClickHouseError, with ClickHouse's code and name; queryserve answers them 500", async () => {
      const syntax = await failureOf(client.query({ query: "SELEC 1" }))
      expect(syntax).toBeInstanceOf(ClickHouseError)
      expect(syntax).toMatchObject({ code: "62", type: "SYNTAX_ERROR" })
      expect(toServeError(syntax)).toMatchObject({ _tag: "InternalError", cause: syntax })
      expect(await failureOf(client.query({ query: "SELECT * FROM missing" }))).toMatchObject({ code: "60", type: "UNKNOWN_TABLE" })
      const badValue = await failureOf(client.query({ query: "SELECT {n:Int64} AS n", query_params: { n: "seven" } }))
      expect(badValue).toMatchObject({ code: "457", type: "BAD_QUERY_PARAMETER" })
    })

    it("a front that is not there is DATABASE_UNREACHABLE", async () => {
      const away = await startChdbHttp(chdb.directory)
      const { url } = away
      await away.stop()
      const lost = createClient({ url, ...QUIET })
      try {
        expect(toServeError(await failureOf(lost.query({ query: "SELECT 1" })))).toMatchObject({ _tag: "DatabaseUnreachable" })
      } finally {
        await lost.close()
      }
    })
  })

  describe("a client that leaves", () => {
    // About a second of the engine's time; parameterized queries run one at a time in chDB.
    const SLOW = "SELECT sum(sleepEachRow(0.1)) + {zero:UInt8} AS slept FROM numbers(10) SETTINGS max_block_size = 1"

    it("is answered at once with its abort, and its queued query never runs", async () => {
      await client.command({ query: "CREATE TABLE ran (request UInt32) ENGINE = Memory" })
      const running = rows(SLOW, { zero: 0 })
      const requests = Array.from({ length: 3 }, () => new AbortController())
      const queued = requests.map((request, i) =>
        client.command({ query: "INSERT INTO ran SELECT {i:UInt32}", query_params: { i }, abort_signal: request.signal })
      )
      // The inserts reach the front and wait behind the slow query.
      await new Promise((resolve) => setTimeout(resolve, 200))
      for (const request of requests) request.abort(new Error("the client left"))
      for (const outcome of await Promise.all(queued.map((query) => settledWithin(query, 200)))) {
        expect(outcome).toMatchObject({ error: { message: "The user aborted a request." } })
      }
      expect(await running).toEqual([{ slept: 0 }])
      expect(await rows("SELECT count() AS runs FROM ran")).toEqual([{ runs: 0 }])
    })
  })

  it("serves all ten demo endpoints", () => {
    expect(ENDPOINTS).toHaveLength(10)
  })

  describe("the demo, loaded and served through the client, answers as over DuckDB", () => {
    itAnswersLikeDuckDb(ENDPOINTS, () => check)
  })
})
