import { fc, test } from "@fast-check/vitest"
import * as Either from "effect/Either"
import { ValidationError } from "queryserve"
import { describe, expect, it } from "vitest"
import { decodeCursor, encodeCursor } from "../../src/pagination/cursor.js"

const refusal = (cursor: unknown, binding: string) => {
  const decoded = decodeCursor(cursor, binding)
  return Either.isLeft(decoded) ? decoded.left : undefined
}

describe("page cursors", () => {
  test.prop([fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.string()])("give back the offset for the inputs they were made for", (offset, binding) => {
    expect(decodeCursor(encodeCursor(offset, binding), binding)).toEqual(Either.right(offset))
  })

  test.prop([fc.nat({ max: 1_000_000 }), fc.string(), fc.string()])("are refused with other inputs", (offset, binding, other) => {
    fc.pre(binding !== other)
    expect(refusal(encodeCursor(offset, binding), other)).toBeInstanceOf(ValidationError)
  })

  it("are refused when any character is altered, on the path cursor", () => {
    const cursor = encodeCursor(200, '["orders",["region"]]')
    for (let i = 0; i < cursor.length; i++) {
      for (const replacement of ["0", "z", "A", "_"]) {
        if (cursor[i] === replacement) continue
        const altered = cursor.slice(0, i) + replacement + cursor.slice(i + 1)
        expect(refusal(altered, '["orders",["region"]]')?.issues).toEqual([
          { path: ["cursor"], message: expect.stringContaining("is not a cursor of this query") }
        ])
      }
    }
  })

  it("refuses what is no cursor at all", () => {
    for (const cursor of [null, 5, "", "abc", "1.", `${"z".repeat(12)}.${"A".repeat(22)}`, { offset: 1 }]) {
      expect(refusal(cursor, "b")?.issues[0]?.path).toEqual(["cursor"])
    }
  })

  it("cannot carry a negative or fractional offset", () => {
    expect(() => encodeCursor(-1, "b")).toThrow(RangeError)
    expect(() => encodeCursor(1.5, "b")).toThrow(RangeError)
  })
})
