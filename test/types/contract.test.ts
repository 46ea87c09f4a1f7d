import { Schema } from "effect"
import {
  createClient,
  defineServe,
  initServe,
  type QueryInput,
  type QueryOutput,
  type ServeClientError,
  type ServeEndpoint
} from "queryserve"
import { describe, expectTypeOf, it } from "vitest"
import { z } from "zod"

// `npm test` runs `tsc --noEmit` over this file first: a wrong type here fails the build, and every
// `@ts-expect-error` fails it too when the line it guards stops being an error.

/** Holds calls that are there for their types: the function is never run, so nothing is sent. */
const typesOnly = (_calls: () => void): void => undefined

const { query } = initServe({ context: () => ({ tenantLabel: "acme" }) })

const DateRange = Schema.Struct({ from: Schema.Date, limit: Schema.optional(Schema.NumberFromString) })
const Total = Schema.Struct({ day: Schema.Date, total: Schema.Number })

const revenue = query
  .input(DateRange)
  .output(Schema.Array(Total))
  .query(({ input, ctx }) => {
    expectTypeOf(input).toEqualTypeOf<{ readonly from: Date; readonly limit?: number }>()
    expectTypeOf(ctx.tenantLabel).toEqualTypeOf<string>()
    return [{ day: input.from, total: input.limit ?? 0 }]
  })

const note = query
  .method("POST")
  .input(z.object({ text: z.string(), pinned: z.boolean().default(false) }))
  .query(async ({ input }) => {
    expectTypeOf(input).toEqualTypeOf<{ text: string; pinned: boolean }>()
    return { id: 1, text: input.text }
  })

const ping = query.query(() => "pong" as const)

const api = defineServe({ queries: { revenue, note, ping } })

describe("procedure builder types", () => {
  it("derives what callers send and receive from the schemas' encoded sides", () => {
    expectTypeOf<QueryInput<typeof revenue>>().toEqualTypeOf<{ readonly from: string; readonly limit?: string }>()
    expectTypeOf<QueryOutput<typeof revenue>>().toEqualTypeOf<ReadonlyArray<{ readonly day: string; readonly total: number }>>()
    expectTypeOf<QueryInput<typeof note>>().toEqualTypeOf<{ text: string; pinned?: boolean | undefined }>()
    expectTypeOf<QueryOutput<typeof note>>().toEqualTypeOf<{ id: number; text: string }>()
    expectTypeOf<QueryOutput<typeof ping>>().toEqualTypeOf<"pong">()
  })

  it("refuses a handler whose result does not fit the declared output", () => {
    // @ts-expect-error total must be a number
    query.output(Total).query(() => ({ day: new Date(), total: "many" }))
    expectTypeOf(query.output(Total).query(() => ({ day: new Date(), total: 1 }))).not.toBeNever()
  })
})

describe("execute types", () => {
  it("takes the caller's input type and resolves to the wire output type", () => {
    typesOnly(() => {
      expectTypeOf(api.execute("revenue", { input: { from: "2024-01-01" } })).toEqualTypeOf<
        Promise<ReadonlyArray<{ readonly day: string; readonly total: number }>>
      >()
      expectTypeOf(api.run("note", { input: { text: "x" } })).toEqualTypeOf<Promise<{ id: number; text: string }>>()
      // @ts-expect-error from is a string on the wire
      void api.execute("revenue", { input: { from: new Date() } })
      // @ts-expect-error no such query
      void api.execute("missing")
    })
  })

  it("describe() lists ServeEndpoints", () => {
    expectTypeOf(api.describe()).toEqualTypeOf<ReadonlyArray<ServeEndpoint>>()
  })
})

describe("client types", () => {
  const client = createClient<typeof api>({ baseUrl: "http://127.0.0.1:1/api/analytics" })

  it("has one call per query, typed by its definition", () => {
    expectTypeOf(client.revenue).parameter(0).toEqualTypeOf<{ readonly from: string; readonly limit?: string }>()
    expectTypeOf(client.revenue).returns.toEqualTypeOf<Promise<ReadonlyArray<{ readonly day: string; readonly total: number }>>>()
    expectTypeOf(client.note).returns.toEqualTypeOf<Promise<{ id: number; text: string }>>()
    expectTypeOf(client.ping).returns.toEqualTypeOf<Promise<"pong">>()
  })

  it("requires an input only when the query needs one", () => {
    expectTypeOf(client.ping).toBeCallableWith()
    typesOnly(() => {
      // @ts-expect-error revenue needs { from }
      void client.revenue()
      // @ts-expect-error limit travels as text
      void client.revenue({ from: "2024-01-01", limit: 5 })
      // @ts-expect-error there is no query "missing"
      void client.missing
    })
  })

  it("makes the input optional for a query whose input is a schema for nothing", () => {
    const nothing = defineServe({
      queries: {
        effectUndefined: query.input(Schema.Undefined).query(() => 1),
        zodUndefined: query.input(z.undefined()).query(() => 1),
        effectVoid: query.input(Schema.Void).query(() => 1),
        zodVoid: query.input(z.void()).query(() => 1),
        undefinedOrRange: query.input(Schema.UndefinedOr(DateRange)).query(() => 1)
      }
    })
    const calls = createClient<typeof nothing>({ baseUrl: "http://127.0.0.1:1/api/analytics" })
    expectTypeOf(calls.effectUndefined).toBeCallableWith()
    expectTypeOf(calls.zodUndefined).toBeCallableWith()
    expectTypeOf(calls.effectVoid).toBeCallableWith()
    expectTypeOf(calls.zodVoid).toBeCallableWith()
    expectTypeOf(calls.undefinedOrRange).toBeCallableWith()
    expectTypeOf(calls.undefinedOrRange).toBeCallableWith({ from: "2024-01-01" })
    typesOnly(() => {
      // @ts-expect-error optional, but still nothing: an object is not undefined
      void calls.effectUndefined({})
      // @ts-expect-error from travels as text
      void calls.undefinedOrRange({ from: new Date() })
    })
  })

  it("rejects with ServeClientError, whose envelope is typed", () => {
    expectTypeOf<ServeClientError["status"]>().toEqualTypeOf<number>()
    expectTypeOf<NonNullable<ServeClientError["envelope"]>["error"]["message"]>().toEqualTypeOf<string>()
  })
})
