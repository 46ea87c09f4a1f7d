/**
 * Rows as every driver gives them turned into one JSON shape: dimensions of their kind, time as
 * `YYYY-MM-DD` (the start of the period), counts as integers, other measures as numbers, whether the
 * driver returned DECIMAL as text, BIGINT as bigint or DATE as a Date.
 */
import type { CheckedDatasetQuery } from "./decode.js"
import type { FieldRef } from "./fields.js"
import { isCount } from "./measure.js"

export type DatasetValue = string | number | boolean | null
export type DatasetRowValues = Readonly<Record<string, DatasetValue>>

/** Thrown for a value the model's kind cannot hold: a mistake in the model (a measure over a text column…), answered as a 500. */
export class DatasetValueError extends Error {
  override readonly name = "DatasetValueError"
}

const NUMBER_TEXT = /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i
const DATE_TIME = /^(\d{4}-\d\d-\d\d)(?:[T ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?))?(Z|[+-]\d\d(?::?\d\d)?)?$/
const MIDNIGHT = /^00:00(:00(\.0+)?)?$/

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

const toNumber = (field: FieldRef, value: unknown): number => {
  const number = typeof value === "bigint" ? Number(value) : typeof value === "string" && NUMBER_TEXT.test(value) ? Number(value) : value
  if (typeof number === "number" && Number.isFinite(number)) return number
  throw new DatasetValueError(`${JSON.stringify(field.name)}: expected a number from the database, got ${typeof value}`)
}

/**
 * A date as `YYYY-MM-DD`, or date-time text for a value finer than a day. A Date is read by its
 * local fields: node-postgres builds DATE and TIMESTAMP values as local times.
 */
export const timeText = (field: FieldRef, value: unknown): string => {
  if (value instanceof Date && !Number.isNaN(value.getTime())) {
    const date = `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`
    const time = `${pad(value.getHours())}:${pad(value.getMinutes())}:${pad(value.getSeconds())}.${pad(value.getMilliseconds(), 3)}`
    return time === "00:00:00.000" ? date : `${date}T${time}`
  }
  const match = typeof value === "string" ? DATE_TIME.exec(value) : null
  if (match === null) throw new DatasetValueError(`${JSON.stringify(field.name)}: expected a date from the database, got ${typeof value}`)
  const [, date, time, zone = ""] = match
  return time === undefined || MIDNIGHT.test(time) ? date! : `${date}T${time}${zone}`
}

const normalize = (field: FieldRef, value: unknown): DatasetValue => {
  if (value === null || value === undefined) return null
  if (field._tag === "Measure") {
    const number = toNumber(field, value)
    return isCount(field.measure) ? Math.round(number) : number
  }
  switch (field.kind) {
    case "string":
      return typeof value === "string" ? value : String(value)
    case "number":
      return toNumber(field, value)
    case "boolean":
      // ClickHouse's UInt8 and some drivers' text spell booleans as 0/1 or "true"/"false".
      return value === true || value === 1 || value === "1" || value === "true" || value === "t"
    case "time":
      return timeText(field, value)
  }
}

/** The rows keyed by the names asked for, in the order asked, values normalised. */
export const normalizeRows = (
  query: CheckedDatasetQuery,
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>
): ReadonlyArray<DatasetRowValues> => {
  const fields: ReadonlyArray<FieldRef> = [...query.dimensions, ...query.measures]
  return rows.map((row) => {
    const out: Record<string, DatasetValue> = {}
    for (const field of fields) out[field.name] = normalize(field, row[field.name])
    return out
  })
}
