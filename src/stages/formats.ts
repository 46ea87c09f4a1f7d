import { NotAcceptable } from "../domain/errors.js"

export type OutputFormat = "json" | "csv" | "ndjson"

/** What the client asked for: a format, and whether it came from `Accept` (so caches must vary on it). */
export interface Representation {
  readonly format: OutputFormat
  readonly varyOnAccept: boolean
  /** Set when `Accept` takes JSON too: what to answer with when the result has no form in `format`. */
  readonly orJson?: Representation
}

const negotiated = (format: OutputFormat): Representation => ({ format, varyOnAccept: true })
const NEGOTIATED: Readonly<Record<OutputFormat, Representation>> = {
  json: negotiated("json"),
  csv: negotiated("csv"),
  ndjson: negotiated("ndjson")
}
const NEGOTIATED_OR_JSON: Readonly<Record<OutputFormat, Representation>> = {
  json: NEGOTIATED.json,
  csv: { ...NEGOTIATED.csv, orJson: NEGOTIATED.json },
  ndjson: { ...NEGOTIATED.ndjson, orJson: NEGOTIATED.json }
}

/** Route suffixes registered beside every GET route, each answering in one fixed format. */
export const FORMAT_SUFFIXES: ReadonlyArray<readonly [suffix: string, representation: Representation]> = [
  [".csv", { format: "csv", varyOnAccept: false }],
  [".ndjson", { format: "ndjson", varyOnAccept: false }]
]

export const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present",
  ndjson: "application/x-ndjson"
}

const MEDIA_TYPES: ReadonlyMap<string, OutputFormat> = new Map([
  ["application/json", "json"],
  ["application/*", "json"],
  ["*/*", "json"],
  ["text/csv", "csv"],
  ["application/x-ndjson", "ndjson"],
  ["application/ndjson", "ndjson"]
])

const qualityOf = (parameters: ReadonlyArray<string>): number => {
  for (const parameter of parameters) {
    const [name, value] = parameter.split("=")
    if (name?.trim().toLowerCase() === "q") {
      // RFC 9110 caps q at 1: `text/csv;q=2` must not outrank a JSON asked for first.
      const q = Number(value)
      return Number.isFinite(q) ? Math.min(1, Math.max(0, q)) : 0
    }
  }
  return 1
}

/**
 * The format `Accept` prefers (highest q, then header order). JSON unless CSV or NDJSON is asked
 * for: media types we do not produce are ignored rather than refused.
 */
// Media types are case-insensitive (RFC 9110 8.3.1): `TEXT/CSV` asks for CSV too.
const TABULAR = /csv|ndjson/i

export const negotiateFormat = (accept: string | undefined): Representation => {
  // Most requests send no Accept or a JSON/wildcard one: decide those without parsing.
  if (accept === undefined || !TABULAR.test(accept)) return NEGOTIATED.json
  let best: OutputFormat = "json"
  let bestQuality = 0
  let takesJson = false
  for (const range of accept.split(",")) {
    const [mediaType = "", ...parameters] = range.split(";")
    const format = MEDIA_TYPES.get(mediaType.trim().toLowerCase())
    const quality = qualityOf(parameters)
    if (format === "json" && quality > 0) takesJson = true
    if (format !== undefined && quality > bestQuality) {
      best = format
      bestQuality = quality
    }
  }
  return (takesJson ? NEGOTIATED_OR_JSON : NEGOTIATED)[best]
}

type Cell = string | number | boolean | bigint | Date | null | undefined

const isCell = (value: unknown): value is Cell =>
  value === null || value instanceof Date || (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol")

const notTabular = (format: OutputFormat, why: string): NotAcceptable =>
  new NotAcceptable({
    message: `This result cannot be given as ${format === "csv" ? "CSV" : "NDJSON"}: ${why}. Ask for application/json instead.`,
    available: ["application/json"]
  })

/** An invalid Date (mysql2's zero dates) is empty, as JSON writes it null; `toISOString` would throw. */
const csvDate = (date: Date): string => (Number.isNaN(date.getTime()) ? "" : date.toISOString())

const csvField = (value: Cell): string => {
  if (value === null || value === undefined) return ""
  // A number needs no quoting; NaN and ±Infinity are empty, as JSON writes them null.
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : ""
  const text = value instanceof Date ? csvDate(value) : String(value)
  // RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** RFC 4180 CSV of an array of flat rows: a header of every key in first-seen order, CRLF after each record. */
export const toCsv = (value: unknown): string => {
  if (!Array.isArray(value)) throw notTabular("csv", "it is not an array of rows")
  const columns = new Map<string, number>()
  for (const row of value) {
    if (typeof row !== "object" || row === null || Array.isArray(row)) throw notTabular("csv", "its rows are not objects")
    for (const [key, cell] of Object.entries(row)) {
      if (!isCell(cell)) throw notTabular("csv", `column "${key}" holds nested data`)
      if (!columns.has(key)) columns.set(key, columns.size)
    }
  }
  if (columns.size === 0) return ""
  const names = [...columns.keys()]
  const lines = [names.map(csvField).join(",")]
  for (const row of value as ReadonlyArray<Record<string, Cell>>) lines.push(names.map((name) => csvField(row[name])).join(","))
  return lines.join("\r\n") + "\r\n"
}

/**
 * One JSON document per line for each element of an array. An element JSON cannot write (a function,
 * a symbol, a `toJSON` giving undefined) serializes to undefined, not text: it is `null`, as
 * `JSON.stringify` writes it inside an array.
 */
export const toNdjson = (value: unknown, serialize: (element: unknown) => string | undefined): string => {
  if (!Array.isArray(value)) throw notTabular("ndjson", "it is not an array")
  let text = ""
  for (const element of value) text += (serialize(element) ?? "null") + "\n"
  return text
}

/**
 * Writes a streamed answer row by row: `first` opens it with the first row (CSV: the header from
 * that row's columns, so later rows give those columns only), `next` adds one row, `close` ends it;
 * an answer without rows is `empty`. A row the format cannot hold throws NotAcceptable.
 */
export interface RowWriter {
  first(row: unknown): string
  next(row: unknown): string
  close(): string
  empty(): string
}

const jsonRow = (serialize: (row: unknown) => string | undefined, row: unknown): string => serialize(row) ?? "null"

const csvRow = (names: ReadonlyArray<string>, row: unknown): string => {
  if (typeof row !== "object" || row === null || Array.isArray(row)) throw notTabular("csv", "its rows are not objects")
  let line = ""
  for (let i = 0; i < names.length; i++) {
    const cell = (row as Record<string, unknown>)[names[i]!]
    if (!isCell(cell)) throw notTabular("csv", `column "${names[i]}" holds nested data`)
    line += i === 0 ? csvField(cell) : "," + csvField(cell)
  }
  return line + "\r\n"
}

/** The RowWriter of `format`; `serialize` is the JSON text of one row (undefined when JSON has none). */
export const rowWriter = (format: OutputFormat, serialize: (row: unknown) => string | undefined): RowWriter => {
  if (format === "json") {
    return { first: (row) => "[" + jsonRow(serialize, row), next: (row) => "," + jsonRow(serialize, row), close: () => "]", empty: () => "[]" }
  }
  if (format === "ndjson") {
    const line = (row: unknown) => jsonRow(serialize, row) + "\n"
    return { first: line, next: line, close: () => "", empty: () => "" }
  }
  let names: ReadonlyArray<string> = []
  return {
    first: (row) => {
      if (typeof row !== "object" || row === null || Array.isArray(row)) throw notTabular("csv", "its rows are not objects")
      names = Object.keys(row)
      return names.length === 0 ? "" : names.map(csvField).join(",") + "\r\n" + csvRow(names, row)
    },
    next: (row) => (names.length === 0 ? "" : csvRow(names, row)),
    close: () => "",
    empty: () => ""
  }
}
