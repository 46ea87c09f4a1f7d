/**
 * A filter's value, checked strictly against its field's kind and operator: a number for a number
 * field, text for a string field, ISO date or date-time text for a time field, never a conversion.
 */
import { formatValue } from "../domain/issueMessages.js"
import type { SqlParam } from "./executor.js"
import { type FieldKind, type FilterOp, MAX_LIST_VALUES } from "./filterOps.js"

/** A checked value: one scalar, a list (`in`, `notIn`), a pair (`between`), or whether to match nulls (`isNull`). */
export type FilterValue =
  | { readonly _tag: "One"; readonly value: SqlParam }
  | { readonly _tag: "List"; readonly values: ReadonlyArray<SqlParam> }
  | { readonly _tag: "Range"; readonly from: SqlParam; readonly to: SqlParam }
  | { readonly _tag: "IsNull"; readonly isNull: boolean }

/** A problem with the value: the path below `value`, and the message. */
export interface ValueIssue {
  readonly path: ReadonlyArray<number>
  readonly message: string
}

const EXPECTED: Readonly<Record<FieldKind, string>> = {
  string: "text",
  number: "a finite number",
  boolean: "true or false",
  time: "an ISO date or date-time text without a time zone (2025-03-01, 2025-03-01T08:30:00)",
  measure: "a finite number"
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?)?$/

/**
 * Time text as `YYYY-MM-DD HH:MM:SS[.ffffff]`, the form every dialect's timestamp accepts; undefined
 * for text that is no real date and time.
 */
export const canonicalTime = (text: string): string | undefined => {
  const match = TIME.exec(text)
  if (match === null) return undefined
  const [, y, mo, d, h = "00", mi = "00", s = "00", fraction = ""] = match
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)))
  date.setUTCFullYear(Number(y))
  const real =
    date.getUTCMonth() === Number(mo) - 1 && date.getUTCDate() === Number(d) && date.getUTCHours() === Number(h) &&
    date.getUTCMinutes() === Number(mi) && date.getUTCSeconds() === Number(s)
  return real && Number(y) >= 1 ? `${y}-${mo}-${d} ${h}:${mi}:${s}${fraction}` : undefined
}

const scalar = (kind: FieldKind, value: unknown): SqlParam | undefined => {
  switch (kind) {
    case "string":
      return typeof value === "string" ? value : undefined
    case "boolean":
      return typeof value === "boolean" ? value : undefined
    case "time":
      return typeof value === "string" ? canonicalTime(value) : undefined
    case "number":
    case "measure":
      return typeof value === "number" && Number.isFinite(value) ? value : undefined
  }
}

type Checked = { readonly value: FilterValue } | { readonly issue: ValueIssue }

const wrong = (expected: string, value: unknown, path: ReadonlyArray<number> = []): Checked => ({
  issue: { path, message: `expected ${expected}, got ${formatValue(value)}` }
})

/** The elements of a list value, each checked; the first wrong one is the issue. */
const elements = (kind: FieldKind, values: ReadonlyArray<unknown>): ReadonlyArray<SqlParam> | ValueIssue => {
  const checked: Array<SqlParam> = []
  for (let i = 0; i < values.length; i++) {
    const one = scalar(kind, values[i])
    if (one === undefined) return { path: [i], message: `expected ${EXPECTED[kind]}, got ${formatValue(values[i])}` }
    checked.push(one)
  }
  return checked
}

export const checkFilterValue = (kind: FieldKind, op: FilterOp, value: unknown): Checked => {
  switch (op) {
    case "isNull":
      return typeof value === "boolean" ? { value: { _tag: "IsNull", isNull: value } } : wrong("true (is null) or false (is not null)", value)
    case "contains":
      return typeof value === "string" ? { value: { _tag: "One", value } } : wrong("the text to find", value)
    case "in":
    case "notIn": {
      const list = `a list of 1 to ${MAX_LIST_VALUES} values, each ${EXPECTED[kind]}`
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES) return wrong(list, value)
      const values = elements(kind, value)
      return "message" in values ? { issue: values } : { value: { _tag: "List", values } }
    }
    case "between": {
      if (!Array.isArray(value) || value.length !== 2) return wrong(`[from, to], two values each ${EXPECTED[kind]}`, value)
      const pair = elements(kind, value)
      return "message" in pair ? { issue: pair } : { value: { _tag: "Range", from: pair[0]!, to: pair[1]! } }
    }
    default: {
      const one = scalar(kind, value)
      return one === undefined ? wrong(EXPECTED[kind], value) : { value: { _tag: "One", value: one } }
    }
  }
}
