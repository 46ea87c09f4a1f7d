import type { InfiniteData } from "@tanstack/react-query"
import { Schema } from "effect"
import { dataset, defineServe, dimension, initServe, measure, type ServeClientError, type SqlExecutor } from "queryserve"
import { describe, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { createHooks, type DatasetAnswer, datasetKeyOf, pagesKeyOf, queryKeyOf } from "../../src/react/index.js"

// `npm test` runs `tsc --noEmit` over this file first: a wrong type here fails the build, and every
// `@ts-expect-error` fails it too when the line it guards stops being an error.

/** Holds hook calls that are there for their types: the function is never run (hooks need a component). */
const typesOnly = (_calls: () => void): void => undefined

const { query } = initServe({})

const Page = <A, I>(row: Schema.Schema<A, I>) =>
  Schema.Struct({
    data: Schema.Array(row),
    page: Schema.Struct({ limit: Schema.Number, nextCursor: Schema.NullOr(Schema.String), hasMore: Schema.Boolean })
  })

const api = defineServe({
  queries: {
    revenue: query
      .input(Schema.Struct({ from: Schema.Date, region: Schema.optional(Schema.String) }))
      .output(Schema.Array(Schema.Struct({ day: Schema.Date, total: Schema.Number })))
      .query(({ input }) => [{ day: input.from, total: 1 }]),
    note: query.method("POST").input(z.object({ text: z.string() })).query(({ input }) => ({ id: 1, text: input.text })),
    ping: query.query(() => "pong" as const),
    orders: query
      .input(Schema.Struct({ region: Schema.String, limit: Schema.optional(Schema.NumberFromString), cursor: Schema.optional(Schema.String) }))
      .output(Page(Schema.Struct({ id: Schema.Number, amount: Schema.Number })))
      .query(() => ({ data: [], page: { limit: 100, nextCursor: null, hasMore: false } }))
  }
})

const hooks = createHooks<typeof api>({ baseUrl: "http://127.0.0.1:4000/api/analytics", methods: { note: "POST" } })

describe("createHooks types", () => {
  it("types useQuery's input and data from the API, and its error as ServeClientError", () => {
    typesOnly(() => {
      const revenue = hooks.useQuery("revenue", { from: "2024-01-01" })
      expectTypeOf(revenue.data).toEqualTypeOf<ReadonlyArray<{ readonly day: string; readonly total: number }> | undefined>()
      expectTypeOf(revenue.error).toEqualTypeOf<ServeClientError | null>()
      expectTypeOf(hooks.useQuery("note", { text: "a" }).data).toEqualTypeOf<{ id: number; text: string } | undefined>()
      // A query that needs no input takes none.
      expectTypeOf(hooks.useQuery("ping").data).toEqualTypeOf<"pong" | undefined>()
      // @ts-expect-error from is required
      hooks.useQuery("revenue", { region: "eu" })
      // @ts-expect-error the caller sends the encoded side: a string, not a Date
      hooks.useQuery("revenue", { from: new Date() })
      // @ts-expect-error no such query
      hooks.useQuery("nope", {})
    })
  })

  it("takes TanStack's options, less the key and the function; select changes the data's type", () => {
    typesOnly(() => {
      const count = hooks.useQuery("revenue", { from: "2024-01-01" }, { select: (rows) => rows.length, staleTime: 5_000 })
      expectTypeOf(count.data).toEqualTypeOf<number | undefined>()
      // @ts-expect-error the hook makes the key
      hooks.useQuery("revenue", { from: "2024-01-01" }, { queryKey: ["revenue"] })
      // @ts-expect-error the hook makes the function
      hooks.useQuery("ping", undefined, { queryFn: () => "pong" as const })
    })
  })

  it("offers useInfiniteQuery for paginated queries only, typing the pages and the input less cursor", () => {
    typesOnly(() => {
      const orders = hooks.useInfiniteQuery("orders", { region: "eu", limit: "50" })
      type OrdersPage = {
        readonly data: ReadonlyArray<{ readonly id: number; readonly amount: number }>
        readonly page: { readonly limit: number; readonly nextCursor: string | null; readonly hasMore: boolean }
      }
      expectTypeOf(orders.data).toEqualTypeOf<InfiniteData<OrdersPage, string | undefined> | undefined>()
      expectTypeOf(orders.error).toEqualTypeOf<ServeClientError | null>()
      // @ts-expect-error the hook sets the cursor
      hooks.useInfiniteQuery("orders", { region: "eu", cursor: "x" })
      // @ts-expect-error revenue's answer is not a page
      hooks.useInfiniteQuery("revenue", { from: "2024-01-01" })
      const rows = hooks.useInfiniteQuery("orders", { region: "eu" }, { select: (pages) => pages.pages.flatMap((page) => page.data) })
      expectTypeOf(rows.data).toEqualTypeOf<Array<{ readonly id: number; readonly amount: number }> | undefined>()
    })
  })

  it("types useDataset's data as the page of rows", () => {
    typesOnly(() => {
      const byRegion = hooks.useDataset("orders", { dimensions: ["region"], measures: ["revenue"], limit: 10 })
      expectTypeOf(byRegion.data).toEqualTypeOf<DatasetAnswer | undefined>()
      expectTypeOf(byRegion.error).toEqualTypeOf<ServeClientError | null>()
      // @ts-expect-error an unknown filter op
      hooks.useDataset("orders", { measures: ["revenue"], filters: [{ field: "region", op: "like", value: "e" }] })
    })
  })

  it("types useDataset by the model when the API's type has datasets", () => {
    const Orders = dataset("orders", {
      source: "orders",
      tenantKey: "tenant_id",
      dimensions: { region: dimension.string(), day: dimension.time() },
      measures: { revenue: measure.sum("amount"), orders: measure.count() }
    })
    const sql: SqlExecutor = { dialect: "duckdb", execute: () => Promise.resolve([]) }
    const withDatasets = defineServe({ queries: {}, tenant: { extract: () => "t" }, datasets: { orders: Orders }, sql })
    const typed = createHooks<typeof withDatasets>({ baseUrl: "http://localhost" })
    typesOnly(() => {
      const monthly = typed.useDataset("orders", { dimensions: ["day.month"], measures: ["revenue", "orders"] })
      expectTypeOf(monthly.data?.data).toEqualTypeOf<
        ReadonlyArray<{ readonly "day.month": string | null; readonly revenue: number | null; readonly orders: number }> | undefined
      >()
      // @ts-expect-error a dataset the API does not serve
      typed.useDataset("customers", { measures: ["revenue"] })
      // @ts-expect-error a measure the model does not have
      typed.useDataset("orders", { measures: ["profit"] })
    })
  })

  it("spells the keys as the hooks cache under them", () => {
    expectTypeOf(queryKeyOf("revenue", { from: "x" })).toEqualTypeOf<readonly ["revenue", { from: string }]>()
    expectTypeOf(pagesKeyOf("orders", { region: "eu" })).toEqualTypeOf<readonly ["orders", { region: string }, "pages"]>()
    expectTypeOf(datasetKeyOf("orders", { measures: ["revenue"] })[0]).toEqualTypeOf<"dataset:orders">()
  })
})
