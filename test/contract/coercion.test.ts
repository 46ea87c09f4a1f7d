import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec"
import { type } from "arktype"
import { Schema } from "effect"
import { defineServe, type ServeSchema } from "queryserve"
import * as v from "valibot"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { bodyOf, get, post } from "../support/requests.js"

const echo = (inputSchema: ServeSchema, method: "GET" | "POST" | "DELETE" = "GET") =>
  defineServe({ queries: { echo: { method, inputSchema, query: ({ input }: { input: unknown }) => input } } })

const Filters = Schema.Struct({
  limit: Schema.optional(Schema.Int),
  ratio: Schema.optional(Schema.Number),
  active: Schema.optional(Schema.Boolean),
  ids: Schema.optional(Schema.Array(Schema.Number)),
  region: Schema.optional(Schema.String),
  threshold: Schema.optional(Schema.NullOr(Schema.Number))
})

const issuesOf = (body: unknown) => (body as { error: { details: { issues: Array<{ path: Array<unknown> }> } } }).error.details.issues

describe("query-string coercion driven by the input's JSON Schema", () => {
  const api = echo(Filters)

  it("turns text into integers, numbers, booleans and null where the schema asks for them", async () => {
    const response = await api.handler(
      get("/api/analytics/echo", { limit: "10", ratio: "-0.25", active: "false", region: "42", threshold: "null" })
    )
    expect(response.status).toBe(200)
    expect(bodyOf(response)).toEqual({ limit: 10, ratio: -0.25, active: false, region: "42", threshold: null })
  })

  it("coerces a number beside string literals (`Int` or `\"all\"`), keeping the literals' own texts", async () => {
    for (const inputSchema of [
      Schema.Struct({ limit: Schema.Union(Schema.Int, Schema.Literal("all", "none")) }),
      z.object({ limit: z.union([z.number().int(), z.literal("all"), z.literal("none")]) })
    ]) {
      const limited = echo(inputSchema)
      for (const [text, value] of [["5", 5], ["all", "all"], ["none", "none"]] as const) {
        expect(bodyOf(await limited.handler(get("/api/analytics/echo", { limit: text })))).toEqual({ limit: value })
      }
      expect((await limited.handler(get("/api/analytics/echo", { limit: "some" }))).status).toBe(400)
    }
  })

  it("reads repeated keys as a list of numbers and a single value as a one-element list", async () => {
    expect(bodyOf(await api.handler(get("/api/analytics/echo", { ids: ["1", "2.5", "3e2"] })))).toEqual({ ids: [1, 2.5, 300] })
    expect(bodyOf(await api.handler(get("/api/analytics/echo", { ids: "7" })))).toEqual({ ids: [7] })
  })

  it.each(["abc", "12abc", "", " 1", "0x10", "Infinity", "1e400", "-1e400", "1,5"])("leaves %j as text so validation reports it", async (text) => {
    const response = await api.handler(get("/api/analytics/echo", { ratio: text }))
    expect(response.status).toBe(400)
    expect(new Set(issuesOf(bodyOf(response)).map((issue) => JSON.stringify(issue.path)))).toEqual(new Set(["[\"ratio\"]"]))
  })

  it("keeps a repeated key for a scalar property as a list, which validation rejects", async () => {
    const response = await api.handler(get("/api/analytics/echo", { limit: ["1", "2"] }))
    expect(response.status).toBe(400)
    expect(issuesOf(bodyOf(response))[0]!.path).toEqual(["limit"])
  })

  it("validates an integer after coercion: 1.5 is a number but not an integer", async () => {
    const response = await api.handler(get("/api/analytics/echo", { limit: "1.5" }))
    expect(response.status).toBe(400)
    expect(issuesOf(bodyOf(response))[0]!.path).toEqual(["limit"])
  })

  it("follows $ref into $defs, at the top and at a property", async () => {
    const Page = Schema.Struct({ page: Schema.Int, size: Schema.optional(Schema.Int) }).annotations({ identifier: "Page" })
    const response = await echo(Page).handler(get("/api/analytics/echo", { page: "2", size: "50" }))
    expect(bodyOf(response)).toEqual({ page: 2, size: 50 })
  })

  it("follows a $ref inside allOf: a refined Int with a default is still coerced", async () => {
    const Limited = Schema.Struct({ limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100)), { default: () => 10 }) })
    expect(bodyOf(await echo(Limited).handler(get("/api/analytics/echo", { limit: "3" })))).toEqual({ limit: 3 })
    expect(bodyOf(await echo(Limited).handler(get("/api/analytics/echo", {})))).toEqual({ limit: 10 })
  })

  it("coerces DELETE query strings and form bodies, but never JSON bodies", async () => {
    const schema = Schema.Struct({ limit: Schema.Number })
    expect(bodyOf(await echo(schema, "DELETE").handler({ ...get("/api/analytics/echo", { limit: "3" }), method: "DELETE" })))
      .toEqual({ limit: 3 })
    const postApi = echo(schema, "POST")
    const form = await postApi.handler(post("/api/analytics/echo", "limit=4", "application/x-www-form-urlencoded"))
    expect(bodyOf(form)).toEqual({ limit: 4 })
    const json = await postApi.handler(post("/api/analytics/echo", JSON.stringify({ limit: "4" })))
    expect(json.status).toBe(400)
  })

  it("uses zod's and arktype's own JSON Schema", async () => {
    const zodApi = echo(z.object({ n: z.number().int(), on: z.boolean(), tags: z.array(z.number()).optional() }))
    expect(bodyOf(await zodApi.handler(get("/api/analytics/echo", { n: "5", on: "true", tags: ["1", "2"] }))))
      .toEqual({ n: 5, on: true, tags: [1, 2] })
    const arkApi = echo(type({ n: "number", "on?": "boolean | null" }))
    expect(bodyOf(await arkApi.handler(get("/api/analytics/echo", { n: "5", on: "null" })))).toEqual({ n: 5, on: null })
  })

  it("leaves input alone when the schema has no JSON Schema (valibot without its converter)", async () => {
    const response = await echo(v.object({ n: v.number() })).handler(get("/api/analytics/echo", { n: "5" }))
    expect(response.status).toBe(400)
    const textApi = echo(v.object({ n: v.pipe(v.string(), v.transform(Number)) }))
    expect(bodyOf(await textApi.handler(get("/api/analytics/echo", { n: "5" })))).toEqual({ n: 5 })
  })

  it("derives the coercion once per endpoint, not per request", async () => {
    let conversions = 0
    const counted: StandardSchemaV1<unknown, { n: number }> & StandardJSONSchemaV1<unknown, { n: number }> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value) =>
          typeof (value as { n?: unknown }).n === "number" ? { value: value as { n: number } } : { issues: [{ message: "n", path: ["n"] }] },
        jsonSchema: {
          input: () => {
            conversions++
            return { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
          },
          output: () => ({})
        }
      }
    }
    const countedApi = echo(counted)
    for (const n of ["1", "2", "3"]) {
      expect(bodyOf(await countedApi.handler(get("/api/analytics/echo", { n })))).toEqual({ n: Number(n) })
    }
    expect(conversions).toBe(1)
  })
})

/** Accepts any input and describes it by `jsonSchema`: the answer shows exactly what coercion did. */
const describedBy = (jsonSchema: Record<string, unknown>): StandardSchemaV1 & StandardJSONSchemaV1 => ({
  "~standard": { version: 1, vendor: "test", validate: (value) => ({ value }), jsonSchema: { input: () => jsonSchema, output: () => ({}) } }
})

const echoed = async (inputSchema: ServeSchema, query: Record<string, string | Array<string>>): Promise<unknown> =>
  bodyOf(await echo(inputSchema).handler(get("/api/analytics/echo", query)))

describe("query-string coercion of tuples", () => {
  it("coerces each position by its own schema (`prefixItems`)", async () => {
    for (const inputSchema of [Schema.Struct({ t: Schema.Tuple(Schema.Number, Schema.String) }), z.object({ t: z.tuple([z.number(), z.string()]) })]) {
      expect(await echoed(inputSchema, { t: ["1", "2"] })).toEqual({ t: [1, "2"] })
    }
  })

  it("coerces the positions after the tuple's own by its rest schema (`items`)", async () => {
    for (const inputSchema of [Schema.Struct({ t: Schema.Tuple([Schema.Number], Schema.Boolean) }), z.object({ t: z.tuple([z.number()], z.boolean()) })]) {
      expect(await echoed(inputSchema, { t: ["1", "true", "false"] })).toEqual({ t: [1, true, false] })
    }
  })

  it("reads a single value as the first position", async () => {
    const inputSchema = Schema.Struct({ t: Schema.Tuple(Schema.Number, Schema.optionalElement(Schema.Boolean)) })
    expect(await echoed(inputSchema, { t: "5" })).toEqual({ t: [5] })
  })
})

describe("query-string coercion of records", () => {
  it("coerces every key by the record's value schema (`additionalProperties`)", async () => {
    const Counts = Schema.Record({ key: Schema.String, value: Schema.Number })
    const zodCounts = z.record(z.string(), z.number())
    for (const inputSchema of [Counts, Counts.annotations({ identifier: "Counts" }), zodCounts, zodCounts.nullable(), type({ "[string]": "number" })]) {
      expect(await echoed(inputSchema, { x: "1", y: "2.5" })).toEqual({ x: 1, y: 2.5 })
    }
  })

  it("applies the list rules to a record of lists: a single value is a one-element list", async () => {
    const inputSchema = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Int) })
    expect(await echoed(inputSchema, { x: ["1", "2"], y: "3" })).toEqual({ x: [1, 2], y: [3] })
  })

  it("coerces the keys a struct does not name by its record part, and named keys by their own schema only", async () => {
    const effect = Schema.Struct({ a: Schema.Number }, Schema.Record({ key: Schema.String, value: Schema.Number }))
    expect(await echoed(effect, { a: "1", x: "2" })).toEqual({ a: 1, x: 2 })
    expect(await echoed(z.object({ a: z.string() }).catchall(z.number()), { a: "1", x: "2" })).toEqual({ a: "1", x: 2 })
    // zod writes an intersection as `allOf`: the record is one part, the named key another.
    const intersection = z.intersection(z.object({ a: z.number() }), z.record(z.string(), z.number()))
    expect(await echoed(intersection, { a: "1", x: "2" })).toEqual({ a: 1, x: 2 })
  })

  it("coerces the keys matching a record's key pattern (`patternProperties`), and leaves the others as text", async () => {
    const effect = Schema.Record({ key: Schema.TemplateLiteral("n_", Schema.String), value: Schema.Number })
    expect(await echoed(effect, { n_a: "1" })).toEqual({ n_a: 1 })
    expect(await echoed(type({ a: "string", "[/^n_/]": "number" }), { a: "1", n_x: "2", z: "3" })).toEqual({ a: "1", n_x: 2, z: "3" })
  })

  it("takes a matching pattern's schema over `additionalProperties`", async () => {
    const inputSchema = describedBy({
      type: "object",
      patternProperties: { "^n_": { type: "number" }, "^s_": { type: "string" } },
      additionalProperties: { type: "boolean" }
    })
    expect(await echoed(inputSchema, { n_a: "1", n_b: "true", s_a: "true", on: "true", off: "1" }))
      .toEqual({ n_a: 1, n_b: "true", s_a: "true", on: true, off: "1" })
  })

  it("reads patterns in unicode mode, else in the older syntax; one read neither way matches no key", async () => {
    const inputSchema = describedBy({
      type: "object",
      patternProperties: { "^\\p{Lu}": { type: "number" }, "^n\\_": { type: "number" }, "(": { type: "null" } },
      additionalProperties: { type: "boolean" }
    })
    expect(await echoed(inputSchema, { Ab: "1", n_a: "1", x: "true" })).toEqual({ Ab: 1, n_a: 1, x: true })
  })

  it("drops a `__proto__` key: Effect would make a record's value for it the input's prototype", async () => {
    const inputSchema = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) })
    const api = defineServe({
      queries: { echo: { inputSchema, query: ({ input }: { input: object }) => ({ input, plainPrototype: Object.getPrototypeOf(input) === Object.prototype }) } }
    })
    const response = await api.handler(get("/api/analytics/echo", { ["__proto__"]: ["1", "2"], x: "3" }))
    expect(bodyOf(response)).toEqual({ input: { x: [3] }, plainPrototype: true })
  })
})
