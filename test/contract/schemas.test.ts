import { type } from "arktype"
import { Schema } from "effect"
import { defineServe, type ServeSchema } from "queryserve"
import * as v from "valibot"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { bodyOf, get, post } from "../support/requests.js"

interface Library {
  readonly name: string
  /** `{ region: string (2+ chars), limit: number }` */
  readonly input: ServeSchema
  /** `{ total: number }` */
  readonly output: ServeSchema
}

const libraries: ReadonlyArray<Library> = [
  {
    name: "Effect Schema",
    input: Schema.Struct({ region: Schema.String.pipe(Schema.minLength(2)), limit: Schema.Number }),
    output: Schema.Struct({ total: Schema.Number })
  },
  {
    name: "zod 4",
    input: z.object({ region: z.string().min(2), limit: z.number() }),
    output: z.object({ total: z.number() })
  },
  {
    name: "valibot",
    input: v.object({ region: v.pipe(v.string(), v.minLength(2)), limit: v.number() }),
    output: v.object({ total: v.number() })
  },
  {
    name: "arktype",
    input: type({ region: "string >= 2", limit: "number" }),
    output: type({ total: "number" })
  }
]

/** `totals` answers `result(input)`; onError events are collected in `errors`. */
const apiWith = (library: Library, result: (input: { limit: number }) => unknown, errors: Array<{ error: unknown; queryKey: string }> = []) =>
  defineServe({
    hooks: { onError: (event) => void errors.push({ error: event.error, queryKey: event.queryKey }) },
    queries: {
      totals: {
        method: "POST",
        inputSchema: library.input,
        outputSchema: library.output,
        query: ({ input }: { input: unknown }) => result(input as { limit: number })
      }
    }
  })

describe.each(libraries)("$name as inputSchema and outputSchema", (library) => {
  it("passes a valid input to the handler and a matching result to the caller", async () => {
    const api = apiWith(library, (input) => ({ total: input.limit * 2 }))
    const response = await api.handler(post("/api/analytics/totals", JSON.stringify({ region: "eu", limit: 5 })))
    expect(response.status).toBe(200)
    expect(bodyOf(response)).toEqual({ total: 10 })
  })

  it("answers an invalid input with 400 VALIDATION_ERROR and issues of { path, message }", async () => {
    const api = apiWith(library, () => ({ total: 1 }))
    const response = await api.handler(post("/api/analytics/totals", JSON.stringify({ region: "x", limit: "many" })))
    expect(response.status).toBe(400)
    const envelope = bodyOf(response) as { error: { type: string; details: { issues: Array<Record<string, unknown>> } } }
    expect(envelope.error.type).toBe("VALIDATION_ERROR")
    const issues = envelope.error.details.issues
    expect(issues.map((issue) => issue.path)).toEqual(expect.arrayContaining([["region"], ["limit"]]))
    for (const issue of issues) {
      expect(Object.keys(issue).sort()).toEqual(["message", "path"])
      expect(issue.message).toEqual(expect.any(String))
      expect((issue.message as string).length).toBeGreaterThan(0)
    }
  })

  it("turns a result that does not match outputSchema into a 500 that leaks nothing, reported to onError", async () => {
    const errors: Array<{ error: unknown; queryKey: string }> = []
    const api = apiWith(library, () => ({ total: "secret-value-42" }), errors)
    const response = await api.handler(post("/api/analytics/totals", JSON.stringify({ region: "eu", limit: 1 })))
    expect(response.status).toBe(500)
    expect(bodyOf(response)).toEqual({ error: { type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" } })
    expect(response.body).not.toContain("secret-value-42")
    expect(response.body).not.toContain("total")
    expect(errors).toHaveLength(1)
    expect(errors[0]!.queryKey).toBe("totals")
    expect(errors[0]!.error).toBeInstanceOf(Error)
  })
})

describe("an input with more bad values than an answer lists", () => {
  const rows = {
    "Effect Schema": Schema.Struct({ rows: Schema.Array(Schema.Struct({ region: Schema.String, limit: Schema.Number })) }),
    "zod 4": z.object({ rows: z.array(z.object({ region: z.string(), limit: z.number() })) })
  }
  it.each(Object.entries(rows))("%s: lists the first 100 issues and says that there are more", async (_name, inputSchema) => {
    const api = defineServe({ queries: { load: { method: "POST", inputSchema, query: () => "loaded" } } })
    const body = JSON.stringify({ rows: Array.from({ length: 5_000 }, () => ({})) })
    const response = await api.handler(post("/api/analytics/load", body))
    const issues = (bodyOf(response) as { error: { details: { issues: Array<{ path: Array<unknown>; message: string }> } } }).error.details.issues
    expect([response.status, issues.length]).toEqual([400, 101])
    expect(issues[0]!.path).toEqual(["rows", 0, "region"])
    expect(issues[100]).toEqual({ path: [], message: "more issues not listed (the first 100 are)" })
  })
})

describe("outputSchema shapes the result", () => {
  it("Effect Schema encodes it: transformations run backwards and undeclared fields are dropped", async () => {
    const api = defineServe({
      queries: {
        day: {
          outputSchema: Schema.Struct({ day: Schema.Date, total: Schema.NumberFromString }),
          query: () => ({ day: new Date(Date.UTC(2024, 0, 2)), total: 12.5, internal: "not for the wire" })
        }
      }
    })
    const response = await api.handler(get("/api/analytics/day"))
    expect(bodyOf(response)).toEqual({ day: "2024-01-02T00:00:00.000Z", total: "12.5" })
  })

  it("a Standard Schema validates it and sends the validator's value (zod strips undeclared keys)", async () => {
    const api = defineServe({
      queries: { day: { outputSchema: z.object({ total: z.number() }), query: () => ({ total: 3, internal: "x" }) } }
    })
    expect(bodyOf(await api.handler(get("/api/analytics/day")))).toEqual({ total: 3 })
  })
})

describe("asynchronous Standard Schema validation", () => {
  const known = z.string().refine(async (region) => region === "eu" || region === "us", "unknown region")
  const api = defineServe({
    queries: { region: { inputSchema: z.object({ region: known }), query: ({ input }: { input: unknown }) => input } }
  })

  it("accepts and rejects through the validator's promise", async () => {
    const accepted = await api.handler(get("/api/analytics/region", { region: "eu" }))
    expect(bodyOf(accepted)).toEqual({ region: "eu" })
    const rejected = await api.handler(get("/api/analytics/region", { region: "mars" }))
    expect(rejected.status).toBe(400)
    expect(bodyOf(rejected)).toMatchObject({ error: { details: { issues: [{ path: ["region"], message: "unknown region" }] } } })
  })
})

describe("validation messages of Effect Schema, in one style whichever check failed", () => {
  const Day = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/))
  const api = defineServe({
    queries: {
      check: {
        method: "POST",
        inputSchema: Schema.Struct({
          amount: Schema.Number,
          limit: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 100))),
          count: Schema.optional(Schema.Int),
          ratio: Schema.optional(Schema.Number.pipe(Schema.positive())),
          name: Schema.optional(Schema.String.pipe(Schema.minLength(2), Schema.maxLength(4))),
          region: Schema.optional(Schema.Literal("eu", "us")),
          note: Schema.optional(Schema.NullOr(Schema.String)),
          scale: Schema.optional(Schema.NumberFromString),
          day: Schema.optional(Day),
          ids: Schema.optional(Schema.Array(Schema.Number).pipe(Schema.minItems(2))),
          custom: Schema.optional(Schema.String.pipe(Schema.filter((s) => s.startsWith("x") || "must start with x"))),
          password: Schema.optional(Schema.Redacted(Schema.String.pipe(Schema.minLength(8))))
        }),
        query: () => 1
      }
    }
  })

  const issuesFor = async (body: unknown) => {
    const response = await api.handler(post("/api/analytics/check", JSON.stringify(body)))
    expect(response.status).toBe(400)
    return (bodyOf(response) as { error: { details: { issues: Array<{ path: Array<string>; message: string }> } } }).error.details.issues
  }

  it("says what was expected and what was sent, never Effect's own wording", async () => {
    const issues = await issuesFor({
      amount: "3abc",
      limit: 300,
      count: 2.5,
      ratio: -1,
      name: "abcdef",
      region: "mars",
      note: 3,
      scale: "many",
      day: "2025-1-1",
      ids: [1],
      custom: "y"
    })
    expect(issues).toEqual([
      { path: ["amount"], message: "expected a number, got \"3abc\"" },
      { path: ["limit"], message: "expected an integer from 1 to 100, got 300" },
      { path: ["count"], message: "expected an integer, got 2.5" },
      { path: ["ratio"], message: "expected a number greater than 0, got -1" },
      { path: ["name"], message: "expected a string of at most 4 characters, got \"abcdef\"" },
      { path: ["region"], message: "expected one of \"eu\", \"us\", got \"mars\"" },
      { path: ["note"], message: "expected a string or null, got 3" },
      { path: ["scale"], message: "expected a number, got \"many\"" },
      { path: ["day"], message: "expected a string matching ^\\d{4}-\\d{2}-\\d{2}$, got \"2025-1-1\"" },
      { path: ["ids"], message: "expected an array of at least 2 items, got [1]" },
      { path: ["custom"], message: "must start with x" }
    ])
    for (const { message } of issues) expect(message).not.toMatch(/^Expected|actual|is missing|Unable to decode/)
  })

  it("says what a redacted field expected, never what was sent: the message reaches logs and onError too", async () => {
    expect(await issuesFor({ amount: 1, password: "hunter2" })).toEqual([
      { path: ["password"], message: "expected a string of at least 8 characters, got a value that is not shown" }
    ])
  })

  it("says `is required` for a missing field, and keeps a message annotation as written", async () => {
    expect(await issuesFor({})).toEqual([{ path: ["amount"], message: "is required" }])
    const annotated = defineServe({
      queries: {
        a: {
          inputSchema: Schema.Struct({ n: Schema.NumberFromString.annotations({ message: () => "give me a number" }) }),
          query: () => 1
        }
      }
    })
    const response = await annotated.handler(get("/api/analytics/a", { n: "x" }))
    expect(bodyOf(response)).toMatchObject({ error: { details: { issues: [{ path: ["n"], message: "give me a number" }] } } })
  })

  it("leaves Standard Schema libraries' own messages as they are", async () => {
    const zodApi = defineServe({ queries: { a: { inputSchema: z.object({ n: z.number() }), query: () => 1 } } })
    const response = await zodApi.handler(get("/api/analytics/a", { n: "x" }))
    const [issue] = (bodyOf(response) as { error: { details: { issues: Array<{ message: string }> } } }).error.details.issues
    expect(issue!.message).toMatch(/expected number, received string/i)
  })
})

describe("a result that fails its output schema", () => {
  it("is a 500 whose reported cause says what failed without showing a Schema.Redacted value", async () => {
    const reported: Array<string> = []
    const api = defineServe({
      queries: {
        token: {
          outputSchema: Schema.Struct({ apiToken: Schema.Redacted(Schema.String), count: Schema.Number }),
          // Plain text where the schema wants a Redacted, and text where it wants a number.
          query: () => ({ apiToken: "TOPSECRET-pw-42", count: "many" }) as never
        }
      },
      queryLogging: (event) => void (event.error !== undefined && reported.push(event.error.message)),
      hooks: { onError: ({ error }) => void reported.push(error instanceof Error ? error.message : String(error)) }
    })
    const response = await api.handler(get("/api/analytics/token"))
    expect(response.status).toBe(500)
    expect(reported).toHaveLength(2)
    for (const message of reported) {
      expect(message).not.toContain("TOPSECRET")
      expect(message).toMatch(/^Output failed validation: apiToken: .*not shown.*; count: expected a number, got "many"$/)
    }
  })
})
