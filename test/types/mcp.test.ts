import { Schema } from "effect"
import {
  defineServe,
  initServe,
  type McpOptions,
  type ProcedureBuilder,
  type QueryInput,
  type QueryOutput,
  type QueryTransport,
  type ServeAuthContext,
  type ServeConfig,
  type ServeQueryEvent
} from "queryserve"
import { describe, expectTypeOf, it } from "vitest"

// `npm test` runs `tsc --noEmit` over this file first: a wrong type here fails the build, and every
// `@ts-expect-error` fails it too when the line it guards stops being an error.

const { query } = initServe({ mcp: true })

describe("MCP config types", () => {
  it("takes mcp: true, false or its options on a ServeConfig", () => {
    expectTypeOf<ServeConfig["mcp"]>().toEqualTypeOf<boolean | McpOptions | undefined>()
    expectTypeOf<McpOptions>().toEqualTypeOf<{
      readonly path?: string
      readonly name?: string
      readonly version?: string
      readonly instructions?: string
      readonly maxBatch?: number
    }>()
    defineServe({ mcp: { path: "/agents", name: "sales", version: "1.2.0", instructions: "Dates are YYYY-MM-DD." }, queries: {} })
    // @ts-expect-error no such MCP option
    defineServe({ mcp: { sessions: true }, queries: {} })
  })

  it("opts a query out with mcp: false or .mcp(false), keeping its types", () => {
    defineServe({ mcp: true, queries: { hidden: { mcp: false, query: () => 1 } } })
    const rows = query.input(Schema.Struct({ limit: Schema.NumberFromString })).mcp(false).query(({ input }) => [input.limit])
    expectTypeOf(query.mcp(false)).toEqualTypeOf<ReturnType<typeof query.describe>>()
    expectTypeOf(query.mcp).returns.toMatchTypeOf<ProcedureBuilder<unknown, unknown, undefined, ServeAuthContext, unknown>>()
    expectTypeOf<QueryInput<typeof rows>>().toEqualTypeOf<{ readonly limit: string }>()
    expectTypeOf<QueryOutput<typeof rows>>().toEqualTypeOf<Array<number>>()
    // @ts-expect-error .mcp takes a boolean
    query.mcp("no")
  })

  it("marks query events with the transport they came by", () => {
    expectTypeOf<QueryTransport>().toEqualTypeOf<"http" | "mcp">()
    expectTypeOf<ServeQueryEvent["transport"]>().toEqualTypeOf<QueryTransport | undefined>()
  })
})
