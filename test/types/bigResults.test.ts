import { Schema } from "effect"
import { createClient, defineServe, initServe, type QueryInput, type QueryOutput } from "queryserve"
import { describe, expectTypeOf, it } from "vitest"
import { z } from "zod"

// Checked by `tsc --noEmit`: paginated and streamed answers as callers see them.

const { query } = initServe({})
const Row = z.object({ id: z.number(), region: z.string() })

const orders = query
  .input(z.object({ region: z.string().optional() }))
  .output(z.array(Row))
  .paginate({ maxLimit: 500 })
  .query(({ ctx }) => {
    expectTypeOf(ctx.page).toEqualTypeOf<{ readonly limit: number; readonly offset: number }>()
    return [{ id: ctx.page.offset, region: "eu" }]
  })

const pagedFirst = query.paginate().output(z.array(Row)).query(() => [])

async function* rows() {
  yield { id: 1, region: "eu" }
}
const exported = query.query(() => rows())

// A declared array output: the handler may stream its elements instead of returning the array.
const EffectRow = Schema.Struct({ id: Schema.Number, region: Schema.String })
const declaredStream = query.output(z.array(Row)).query(() => rows())
const declaredWebStream = query.output(z.array(Row)).query(() => new ReadableStream<{ id: number; region: string }>())
const declaredEffectStream = query.output(Schema.Array(EffectRow)).query(({ ctx }) => streamWith(ctx.signal))
const declaredPagedStream = query.output(z.array(Row)).paginate().query(() => rows())
const declaredArray = query.output(z.array(Row)).query(async () => [{ id: 1, region: "eu" }])
async function* streamWith(_signal: AbortSignal | undefined) {
  yield { id: 1, region: "eu" }
}

// A non-array output still wants the value itself, and streamed rows must fit the element schema.
// @ts-expect-error an AsyncIterable is no answer to an object output
query.output(Row).query(() => rows())
// @ts-expect-error a ReadableStream is no answer to an object output
query.output(EffectRow).query(() => new ReadableStream<{ id: number; region: string }>())
// @ts-expect-error streamed rows must match the declared element
query.output(z.array(Row)).query(async function* () {
  yield { id: "1", region: "eu" }
})

// The object form: `paginate: {…}` on a query config.
const objectPaged = { paginate: { maxLimit: 500 }, query: () => [{ id: 1, region: "eu" }] }
const objectPagedStream = { paginate: {}, query: () => rows() }
const objectPagedAsync = { paginate: { defaultLimit: 10 }, query: async () => [{ id: 1, region: "eu" }] }
const objectPlain = { query: () => [{ id: 1, region: "eu" }] }

const api = defineServe({
  queries: { orders, pagedFirst, exported, objectPaged, objectPagedStream, objectPlain, declaredStream, declaredEffectStream }
})

type Wrapped = {
  readonly data: Array<{ id: number; region: string }>
  readonly page: { readonly limit: number; readonly nextCursor: string | null; readonly hasMore: boolean }
}

describe("paginated and streamed query types", () => {
  it("wraps a paginated query's output in a page, whichever of paginate and output comes first", () => {
    expectTypeOf<QueryOutput<typeof orders>>().toEqualTypeOf<Wrapped>()
    expectTypeOf<QueryOutput<typeof pagedFirst>>().toEqualTypeOf<Wrapped>()
  })

  it("wraps the rows of an object config with paginate: {…} in a page, streamed or not", () => {
    expectTypeOf<QueryOutput<typeof objectPaged>>().toEqualTypeOf<Wrapped>()
    expectTypeOf<QueryOutput<typeof objectPagedStream>>().toEqualTypeOf<Wrapped>()
    expectTypeOf<QueryOutput<typeof objectPagedAsync>>().toEqualTypeOf<Wrapped>()
    expectTypeOf<QueryOutput<typeof objectPlain>>().toEqualTypeOf<Array<{ id: number; region: string }>>()
  })

  it("takes limit and cursor besides the query's own input", () => {
    expectTypeOf<QueryInput<typeof orders>>().toMatchTypeOf<{ region?: string; limit?: number; cursor?: string }>()
  })

  it("gives a streamed answer's wire type as the array of its rows", () => {
    expectTypeOf<QueryOutput<typeof exported>>().toEqualTypeOf<Array<{ id: number; region: string }>>()
  })

  it("types the client's answers the same way", () => {
    const client = createClient<typeof api>({ baseUrl: "http://127.0.0.1:1/api/analytics" })
    expectTypeOf(client.orders).returns.resolves.toHaveProperty("page")
    expectTypeOf(client.exported).returns.resolves.toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf(client.objectPaged).returns.resolves.toEqualTypeOf<Wrapped>()
    expectTypeOf(client.objectPagedStream).returns.resolves.toEqualTypeOf<Wrapped>()
    expectTypeOf(client.objectPlain).returns.resolves.toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf(api.execute("objectPaged")).resolves.toEqualTypeOf<Wrapped>()
  })

  it("lets a handler stream the elements of a declared array output, answering the array", () => {
    expectTypeOf<QueryOutput<typeof declaredStream>>().toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf<QueryOutput<typeof declaredWebStream>>().toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf<QueryOutput<typeof declaredEffectStream>>().toEqualTypeOf<
      ReadonlyArray<{ readonly id: number; readonly region: string }>
    >()
    expectTypeOf<QueryOutput<typeof declaredPagedStream>>().toEqualTypeOf<Wrapped>()
    expectTypeOf<QueryOutput<typeof declaredArray>>().toEqualTypeOf<Array<{ id: number; region: string }>>()
    const client = createClient<typeof api>({ baseUrl: "http://127.0.0.1:1/api/analytics" })
    expectTypeOf(client.declaredStream).returns.resolves.toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf(api.execute("declaredStream")).resolves.toEqualTypeOf<Array<{ id: number; region: string }>>()
    expectTypeOf(api.execute("declaredEffectStream")).resolves.toEqualTypeOf<
      ReadonlyArray<{ readonly id: number; readonly region: string }>
    >()
  })
})
