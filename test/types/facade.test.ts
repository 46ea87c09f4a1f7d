import { Schema } from "effect"
import { apiKeyAuth, defineServe, initServe, type ServeAuthContext, type ServeRequest } from "queryserve"
import { describe, expectTypeOf, it } from "vitest"
import { z } from "zod"

// `npm test` runs `tsc --noEmit` over this file first: a wrong type here fails the build, and every
// `@ts-expect-error` fails it too when the line it guards stops being an error.

/** Holds calls that are there for their types: the function is never run, so nothing is sent. */
const typesOnly = (_calls: () => void): void => undefined

type Caller = { readonly id: string; readonly tenantId: string }
const auth = apiKeyAuth<Caller>({ validate: () => null })
/** initServe's caller: the strategy's type, with ServeAuthContext's fields known. */
type InitCaller = Caller & ServeAuthContext

describe("initServe context types", () => {
  it("types the context factory's arguments as defineServe does", () => {
    initServe({
      auth,
      context: ({ auth, request }) => {
        expectTypeOf(auth).toEqualTypeOf<InitCaller | null>()
        expectTypeOf(request).toEqualTypeOf<ServeRequest>()
        return {}
      }
    })
    defineServe({
      auth,
      context: ({ auth }) => {
        expectTypeOf(auth).toEqualTypeOf<Caller | null>()
        return {}
      },
      queries: {}
    })
  })

  it("gives handlers the context's fields and the caller type", () => {
    const { query } = initServe({
      auth,
      context: ({ auth, request }) => ({ who: auth?.id, path: request.path })
    })
    query.query(({ ctx }) => {
      expectTypeOf(ctx.who).toEqualTypeOf<string | undefined>()
      expectTypeOf(ctx.path).toEqualTypeOf<string>()
      expectTypeOf(ctx.auth).toEqualTypeOf<InitCaller | null>()
      // @ts-expect-error the context has no such field
      void ctx.db
      return 1
    })
  })

  it("takes an async factory, an object or no context", () => {
    initServe({ context: async () => ({ db: 1 as const }) }).query.query(({ ctx }) => {
      expectTypeOf(ctx.db).toEqualTypeOf<1>()
      return 1
    })
    initServe({ context: { label: "acme" } }).query.query(({ ctx }) => {
      expectTypeOf(ctx.label).toEqualTypeOf<string>()
      return 1
    })
    initServe({}).query.query(({ ctx }) => {
      expectTypeOf(ctx.auth).toEqualTypeOf<ServeAuthContext | null>()
      return 1
    })
  })

  it("refuses a factory that misuses the caller", () => {
    // @ts-expect-error id is a string
    initServe({ auth, context: ({ auth }) => ({ id: auth?.id.toFixed() }) })
  })
})

describe("execute input types", () => {
  const { query, define } = initServe({})
  const api = define({
    queries: {
      range: query.input(Schema.Struct({ from: Schema.String })).query(({ input }) => input.from),
      paged: query.input(z.object({ page: z.number().optional() })).query(() => 1),
      nothing: query.input(Schema.Undefined).query(() => 1),
      plain: query.query(() => 1)
    }
  })

  it("requires the input exactly when the query needs one", () => {
    typesOnly(() => {
      expectTypeOf(api.execute("range", { input: { from: "2024-01-01" } })).toEqualTypeOf<Promise<string>>()
      void api.execute("paged")
      void api.execute("paged", {})
      void api.execute("nothing")
      void api.run("plain")
      void api.run("plain", { context: { tenantId: "t" } })
      // @ts-expect-error range needs { from }
      void api.execute("range")
      // @ts-expect-error options without the input
      void api.execute("range", {})
      // @ts-expect-error run needs it too
      void api.run("range", { request: { headers: {} } })
      // @ts-expect-error from is a string
      void api.execute("range", { input: { from: 1 } })
    })
  })

  it("keeps optional input for a builder of any queries", () => {
    const loose = defineServe({ queries: {} }) as import("queryserve").ServeBuilder
    typesOnly(() => void loose.execute("whatever"))
  })
})
