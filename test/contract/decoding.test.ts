import { Arbitrary, Either, FastCheck as fc, ParseResult, Schema } from "effect"
import { defineServe, ServeHttpError } from "queryserve"
import { describe, expect, it } from "vitest"

/**
 * Valid input of the usual shapes is decoded without running Effect's decoder (a compiled fast path);
 * it must give exactly what Effect's decoder gives (same values, same keys in the same order, excess
 * keys dropped) and refuse exactly what it refuses. Each schema below is checked on arbitrary valid
 * values (Effect's own Arbitrary), on those with extra keys or one key changed, and on arbitrary JSON. (Effect's copy of
 * fast-check, which its Arbitrary builds on.)
 */
const schemas = {
  enumAndRange: Schema.Struct({ region: Schema.Literal("eu", "us", "apac"), limit: Schema.Int.pipe(Schema.between(1, 100)) }),
  optionalsAndArrays: Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(1)),
    tags: Schema.Array(Schema.String),
    flag: Schema.optional(Schema.Boolean),
    note: Schema.optionalWith(Schema.String, { exact: true }),
    maybe: Schema.Union(Schema.Number, Schema.Undefined)
  }),
  nested: Schema.Struct({ a: Schema.Struct({ b: Schema.Number }), list: Schema.Array(Schema.Struct({ id: Schema.Int })) }),
  structFilter: Schema.Struct({ from: Schema.Number, to: Schema.Number }).pipe(Schema.filter(({ from, to }) => from <= to)),
  transformed: Schema.Struct({ n: Schema.NumberFromString, at: Schema.optionalWith(Schema.Number, { default: () => 7 }) }),
  strictKeys: Schema.Struct({ id: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } })
} as const

const OPTIONS = { errors: "all", onExcessProperty: "ignore" } as const

/** Effect's own answer for `input`: the decoded value, or undefined when it refuses. */
const effectDecode = (schema: Schema.Schema.AnyNoContext, input: unknown): { readonly ok: boolean; readonly value?: unknown } => {
  const result = ParseResult.decodeUnknownEither(schema, OPTIONS)(input)
  return Either.isRight(result) ? { ok: true, value: result.right } : { ok: false }
}

const json = fc.jsonValue({ maxDepth: 3 })

describe("decoding input with Effect Schema", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    const api = defineServe({ queries: { echo: { method: "POST", inputSchema: schema, query: ({ input }: { input: unknown }) => input } } })
    const queryserveDecode = (input: unknown): Promise<{ readonly ok: boolean; readonly value?: unknown }> =>
      api.execute("echo", { input }).then(
        (value) => ({ ok: true, value }),
        (error: unknown) => {
          expect(error).toBeInstanceOf(ServeHttpError)
          expect((error as ServeHttpError).status).toBe(400)
          return { ok: false }
        }
      )
    const valid = Arbitrary.make(schema as Schema.Schema.AnyNoContext)
    const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
    const withExtraKeys = fc.tuple(valid, fc.dictionary(fc.string(), json, { maxKeys: 3 })).map(([value, extra]) =>
      isRecord(value) ? { ...extra, ...value, ...extra } : value
    )
    // One declared key given another value: near misses that only a refinement or a member type refuses.
    const oneKeyChanged = fc.tuple(valid, fc.nat(), fc.oneof(json, fc.integer({ min: -5, max: 200 }), fc.double())).map(([value, pick, other]) => {
      if (!isRecord(value)) return value
      const keys = Object.keys(value)
      return keys.length === 0 ? value : { ...value, [keys[pick % keys.length]!]: other }
    })

    it(`${name}: accepts and refuses what Effect does, with the same value`, () =>
      fc.assert(
        fc.asyncProperty(fc.oneof(valid, withExtraKeys, oneKeyChanged, json), async (input) => {
          const expected = effectDecode(schema as Schema.Schema.AnyNoContext, input)
          const actual = await queryserveDecode(input)
          expect(actual.ok).toBe(expected.ok)
          if (expected.ok) {
            expect(actual.value).toStrictEqual(expected.value)
            expect(Object.keys(Object(actual.value))).toEqual(Object.keys(Object(expected.value)))
          }
        }),
        { numRuns: 200 }
      ))
  }
})
