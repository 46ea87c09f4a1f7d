/** What differs between the SQL of DuckDB, Postgres and ClickHouse: quoting, placeholders, time grains, functions. */
import type { Grain } from "./dimension.js"
import type { SqlDialect, SqlParam } from "./executor.js"

/** What a bound value is compared with, so the placeholder can say its type where the dialect needs it. */
export type ParamKind = "text" | "number" | "boolean" | "time"

export interface Dialect {
  /** `"name"`: identifiers are plain by construction; quoting keeps keywords and case as written. */
  readonly quote: (identifier: string) => string
  /** The placeholder of the `index`th parameter (from 1), with `value` bound to it. */
  readonly placeholder: (index: number, value: SqlParam, kind: ParamKind) => string
  /** `expression` cut to the start of its `grain`, as a DATE. */
  readonly truncate: (expression: string, grain: Grain) => string
  /** Whether `needle` (a placeholder) occurs in `expression`, literally: no pattern characters. */
  readonly contains: (expression: string, needle: string) => string
  readonly toDouble: (expression: string) => string
  /** Whether params are an array (`$1…`) or a record keyed `p1…` (ClickHouse). */
  readonly namedParams: boolean
}

const doubleQuote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

/** date_trunc as DuckDB and Postgres have it; both start weeks on Monday (ISO). */
const dateTrunc = (expression: string, grain: Grain): string =>
  grain === "day" ? `CAST(${expression} AS DATE)` : `CAST(date_trunc('${grain}', ${expression}) AS DATE)`

const duckdb: Dialect = {
  quote: doubleQuote,
  // A time is bound as text and cast: DuckDB infers the other parameters' types from their use.
  placeholder: (index, _value, kind) => (kind === "time" ? `CAST($${index} AS TIMESTAMP)` : `$${index}`),
  truncate: dateTrunc,
  contains: (expression, needle) => `strpos(${expression}, ${needle}) > 0`,
  toDouble: (expression) => `CAST(${expression} AS DOUBLE)`,
  namedParams: false
}

const POSTGRES_CASTS: Readonly<Record<ParamKind, string | undefined>> = {
  // Text stays untyped: Postgres gives it the type of the column it meets (text, varchar, an integer tenant id).
  text: undefined,
  // node-postgres sends numbers as text; NUMERIC reads every one exactly and compares with any numeric type.
  number: "NUMERIC",
  boolean: "BOOLEAN",
  time: "TIMESTAMP"
}

const postgres: Dialect = {
  quote: doubleQuote,
  placeholder: (index, _value, kind) => {
    const cast = POSTGRES_CASTS[kind]
    return cast === undefined ? `$${index}` : `CAST($${index} AS ${cast})`
  },
  truncate: dateTrunc,
  contains: (expression, needle) => `strpos(${expression}, ${needle}) > 0`,
  toDouble: (expression) => `CAST(${expression} AS DOUBLE PRECISION)`,
  namedParams: false
}

const CLICKHOUSE_GRAINS: Readonly<Record<Grain, (expression: string) => string>> = {
  day: (e) => `toDate(${e})`,
  // Mode 1: weeks start on Monday, as on the other dialects.
  week: (e) => `toStartOfWeek(${e}, 1)`,
  month: (e) => `toStartOfMonth(${e})`,
  quarter: (e) => `toStartOfQuarter(${e})`,
  year: (e) => `toStartOfYear(${e})`
}

const clickhouseType = (value: SqlParam, kind: ParamKind): string => {
  switch (kind) {
    case "text":
      return "String"
    case "boolean":
      return "Bool"
    case "time":
      return "DateTime64(6)"
    case "number":
      return typeof value === "number" && Number.isSafeInteger(value) ? "Int64" : "Float64"
  }
}

const clickhouse: Dialect = {
  quote: (identifier) => `"${identifier.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`,
  placeholder: (index, value, kind) => `{p${index}:${clickhouseType(value, kind)}}`,
  truncate: (expression, grain) => CLICKHOUSE_GRAINS[grain](expression),
  contains: (expression, needle) => `position(${expression}, ${needle}) > 0`,
  toDouble: (expression) => `toFloat64(${expression})`,
  namedParams: true
}

export const DIALECTS: Readonly<Record<SqlDialect, Dialect>> = { duckdb, postgres, clickhouse }
