import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ValidationError } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queryDataset } from "../../src/datasets/run.js"
import { type DemoDatabase, openDemoDatabase, recording } from "./demoDatabase.js"
import { Orders } from "./ordersModel.js"

const DIMENSIONS =
  "region, category, product, day, day.day, day.week, day.month, day.quarter, day.year, quantity, multi"
const MEASURES = "revenue, orders, customers, avgOrder, minOrder, maxOrder, revenuePerCustomer"

/** Body, the path of the issue, and what its message says (the allowed values among it). */
const BAD_INPUT: ReadonlyArray<readonly [string, unknown, ReadonlyArray<PropertyKey>, RegExp]> = [
  ["not an object", ["region"], [], /expected a query object \{ dimensions, measures, filters, orderBy, limit, cursor \}/],
  ["an unknown key", { dimensions: ["region"], sort: "revenue" }, ["sort"], /is not allowed; the keys are dimensions, measures, filters, orderBy, limit, cursor/],
  ["an empty query", {}, [], /ask for at least one dimension or measure/],
  ["empty lists", { dimensions: [], measures: [] }, [], /ask for at least one dimension or measure/],
  ["an unknown dimension", { dimensions: ["country"] }, ["dimensions", 0], new RegExp(`unknown dimension "country"; the dimensions are ${DIMENSIONS}`)],
  ["an unknown grain", { dimensions: ["region", "day.hour"] }, ["dimensions", 1], /unknown grain "hour" of time dimension "day"; the grains are day, week, month, quarter, year/],
  ["a grain of a string dimension", { dimensions: ["region.month"] }, ["dimensions", 0], /"region" is a string dimension and has no grains/],
  ["a measure as a dimension", { dimensions: ["revenue"] }, ["dimensions", 0], /"revenue" is a measure, not a dimension/],
  ["an unknown measure", { measures: ["profit"] }, ["measures", 0], new RegExp(`unknown measure "profit"; the measures are ${MEASURES}`)],
  ["a repeated field", { measures: ["orders", "orders"] }, ["measures", 1], /"orders" is listed twice/],
  ["an unknown filter field", { measures: ["orders"], filters: [{ field: "country", op: "eq", value: "x" }] }, ["filters", 0, "field"], /unknown field "country"; the fields are region, /],
  ["an unknown op", { measures: ["orders"], filters: [{ field: "region", op: "like", value: "%" }] }, ["filters", 0, "op"], /unknown op "like"; the ops for "region" are eq, neq, in, notIn, contains, isNull/],
  ["an op of another kind", { measures: ["orders"], filters: [{ field: "multi", op: "gt", value: true }] }, ["filters", 0, "op"], /"gt" does not apply to "multi", a boolean; its ops are eq, neq, isNull/],
  ["contains on a measure", { measures: ["orders"], filters: [{ field: "revenue", op: "contains", value: "1" }] }, ["filters", 0, "op"], /its ops are eq, neq, in, notIn, gt, gte, lt, lte, between, isNull/],
  ["a number for a string", { measures: ["orders"], filters: [{ field: "region", op: "eq", value: 3 }] }, ["filters", 0, "value"], /expected text, got 3/],
  ["text for a measure", { measures: ["orders"], filters: [{ field: "revenue", op: "gt", value: "100" }] }, ["filters", 0, "value"], /expected a finite number, got "100"/],
  ["text for a number", { measures: ["orders"], filters: [{ field: "quantity", op: "eq", value: "3" }] }, ["filters", 0, "value"], /expected a finite number, got "3"/],
  ["text for a boolean", { measures: ["orders"], filters: [{ field: "multi", op: "eq", value: "true" }] }, ["filters", 0, "value"], /expected true or false, got "true"/],
  ["no date", { measures: ["orders"], filters: [{ field: "day", op: "gte", value: "yesterday" }] }, ["filters", 0, "value"], /expected an ISO date or date-time text without a time zone/],
  ["no real date", { measures: ["orders"], filters: [{ field: "day", op: "lt", value: "2025-02-30" }] }, ["filters", 0, "value"], /got "2025-02-30"/],
  ["a time zone", { measures: ["orders"], filters: [{ field: "day", op: "lt", value: "2025-02-01T00:00:00Z" }] }, ["filters", 0, "value"], /without a time zone/],
  ["a wrong list element", { measures: ["orders"], filters: [{ field: "region", op: "in", value: ["na", 1] }] }, ["filters", 0, "value", 1], /expected text, got 1/],
  ["an empty list", { measures: ["orders"], filters: [{ field: "region", op: "notIn", value: [] }] }, ["filters", 0, "value"], /expected a list of 1 to 1000 values, each text/],
  ["a range of three", { measures: ["orders"], filters: [{ field: "quantity", op: "between", value: [1, 2, 3] }] }, ["filters", 0, "value"], /expected \[from, to\], two values each a finite number/],
  ["isNull with text", { measures: ["orders"], filters: [{ field: "category", op: "isNull", value: "yes" }] }, ["filters", 0, "value"], /expected true \(is null\) or false \(is not null\)/],
  ["a filter key too many", { measures: ["orders"], filters: [{ field: "region", op: "eq", value: "na", or: "1=1" }] }, ["filters", 0, "or"], /is not allowed; the keys are field, op, value/],
  ["an order on a field not asked", { dimensions: ["region"], orderBy: [{ field: "revenue" }] }, ["orderBy", 0, "field"], /expected a field the query asks for \("region"\), got "revenue"/],
  ["an unknown direction", { dimensions: ["region"], orderBy: [{ field: "region", direction: "up" }] }, ["orderBy", 0, "direction"], /expected "asc" or "desc", got "up"/],
  ["limit 0", { measures: ["orders"], limit: 0 }, ["limit"], /expected an integer from 1 to 10000, got 0/],
  ["limit 10001", { measures: ["orders"], limit: 10_001 }, ["limit"], /expected an integer from 1 to 10000, got 10001/],
  ["a limit as text", { measures: ["orders"], limit: "10" }, ["limit"], /expected an integer from 1 to 10000, got "10"/],
  ["a made-up cursor", { measures: ["orders"], cursor: "1o.AAAAAAAAAAAAAAAAAAAAAA" }, ["cursor"], /is not a cursor of this query/],
  ["a cursor that is no text", { measures: ["orders"], cursor: 100 }, ["cursor"], /expected the text of page.nextCursor/]
]

describe("refused dataset queries", () => {
  let db: DemoDatabase
  beforeAll(async () => {
    db = await openDemoDatabase(5_000)
  })
  afterAll(() => db?.close())

  const ask = (body: unknown, executor = recording(db.executor)) =>
    Effect.runPromise(Effect.either(queryDataset(Orders, body, { executor, tenantId: "acme", auth: null }))).then((answer) => ({
      answer,
      ran: executor.statements.length
    }))

  it.each(BAD_INPUT)("refuses %s with a ValidationError naming the path, running nothing", async (_, body, path, message) => {
    const { answer, ran } = await ask(body)
    const error = Either.isLeft(answer) ? answer.left : undefined
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).issues).toContainEqual({ path, message: expect.stringMatching(message) })
    expect(ran).toBe(0)
  })

  it("lists every problem of a body at once", async () => {
    const { answer } = await ask({ dimensions: ["country"], measures: ["profit"], limit: 0 })
    const issues = Either.isLeft(answer) ? (answer.left as ValidationError).issues : []
    expect(issues.map((i) => i.path)).toEqual([["dimensions", 0], ["measures", 0], ["limit"]])
  })

  it("runs exactly one statement for a good query (the recording executor sees what runs)", async () => {
    const { answer, ran } = await ask({ measures: ["orders"] })
    expect(Either.isRight(answer)).toBe(true)
    expect(ran).toBe(1)
  })

  it("refuses a caller without a tenant with Forbidden missing_tenant before reading the body", async () => {
    const executor = recording(db.executor)
    for (const tenantId of [null, undefined, ""]) {
      const answer = await Effect.runPromise(Effect.either(queryDataset(Orders, {}, { executor, tenantId, auth: { roles: ["admin"] } })))
      expect(answer).toMatchObject({ left: { _tag: "Forbidden", reason: "missing_tenant" } })
    }
    expect(executor.statements).toEqual([])
  })
})
