/**
 * Values JSON has no exact counterpart of, and the text every driver must give for them, whichever
 * database serves the endpoint (docs/databases.md, "Values"): the same SELECT on DuckDB, Postgres
 * and ClickHouse (ClickHouse's own SQL where it differs) and the one expected value.
 */
import type { Json } from "../../../examples/analytics/sql.js"

export interface ValueCase {
  readonly name: string
  /** A SELECT of one column `v`, for DuckDB and Postgres. */
  readonly standard: string
  /** The same in ClickHouse SQL; undefined where ClickHouse has no such type (time zones live in its column types). */
  readonly clickhouse: string | undefined
  readonly expected: Json
}

/** `SELECT expression AS v`, and its FROM clause if it has one. */
const select = (expression: string): string =>
  `SELECT ${expression.includes(" FROM ") ? expression.replace(" FROM ", " AS v FROM ") : `${expression} AS v`}`

const value = (name: string, standard: string, clickhouse: string | undefined, expected: Json): ValueCase => ({
  name,
  standard: select(standard),
  clickhouse: clickhouse === undefined ? undefined : select(clickhouse),
  expected
})

export const VALUE_CASES: ReadonlyArray<ValueCase> = [
  value("a BIGINT past 2^53 (an id)", "CAST(9007199254740993 AS BIGINT)", "toInt64(9007199254740993)", "9007199254740993"),
  value("a negative BIGINT past -2^53", "CAST(-9007199254740993 AS BIGINT)", "toInt64(-9007199254740993)", "-9007199254740993"),
  value("a BIGINT of 2^53, exact as a double", "CAST(9007199254740992 AS BIGINT)", "toInt64(9007199254740992)", 9007199254740992),
  value(
    "a sum of BIGINTs past 2^53",
    "sum(x) FROM (VALUES (CAST(9007199254740993 AS BIGINT)), (CAST(2 AS BIGINT))) t(x)",
    "sum(x) FROM (SELECT arrayJoin([toInt64(9007199254740993), toInt64(2)]) AS x)",
    "9007199254740995"
  ),
  value("a count", "count(*) FROM (VALUES (1), (2), (3)) t(x)", "count() FROM numbers(3)", 3),
  value("a DECIMAL a double cannot hold", "CAST('12345678901234567.89' AS DECIMAL(38, 2))", "toDecimal128('12345678901234567.89', 2)", "12345678901234567.89"),
  value("a DECIMAL a double cannot hold, with a trailing zero", "CAST('12345678901234567.80' AS DECIMAL(38, 2))", "toDecimal128('12345678901234567.80', 2)", "12345678901234567.8"),
  value("money", "CAST('1351282.11' AS DECIMAL(12, 2))", "toDecimal64('1351282.11', 2)", 1351282.11),
  value("a DECIMAL with a trailing zero", "CAST('10.50' AS DECIMAL(12, 2))", "toDecimal64('10.50', 2)", 10.5),
  value("a negative cent", "CAST('-0.01' AS DECIMAL(12, 2))", "toDecimal64('-0.01', 2)", -0.01),
  value("10^22: 23 digits, exact as a double", "CAST('10000000000000000000000' AS DECIMAL(38, 0))", "toDecimal128('10000000000000000000000', 0)", 1e22),
  value("a timestamp", "CAST('2025-01-15 10:00:00' AS TIMESTAMP)", "toDateTime('2025-01-15 10:00:00', 'UTC')", "2025-01-15 10:00:00"),
  value("a timestamp whose fraction is zero", "CAST('2025-01-15 10:00:00' AS TIMESTAMP)", "toDateTime64('2025-01-15 10:00:00', 3, 'UTC')", "2025-01-15 10:00:00"),
  value("a timestamp in milliseconds", "CAST('2025-01-15 10:00:00.12' AS TIMESTAMP)", "toDateTime64('2025-01-15 10:00:00.120', 3, 'UTC')", "2025-01-15 10:00:00.12"),
  value("a timestamp in microseconds", "CAST('2025-01-15 10:00:00.123456' AS TIMESTAMP)", "toDateTime64('2025-01-15 10:00:00.123456', 6, 'UTC')", "2025-01-15 10:00:00.123456"),
  value("a timestamptz", "CAST('2025-01-15 10:00:00+00' AS TIMESTAMPTZ)", undefined, "2025-01-15T10:00:00Z"),
  value("a timestamptz written in another offset", "CAST('2025-01-15 05:00:00.5-05' AS TIMESTAMPTZ)", undefined, "2025-01-15T10:00:00.5Z"),
  value("a timestamptz on the next day in UTC", "CAST('2025-01-15 22:30:00-05:00' AS TIMESTAMPTZ)", undefined, "2025-01-16T03:30:00Z"),
  value("a date", "CAST('2025-01-15' AS DATE)", "toDate('2025-01-15')", "2025-01-15"),
  value("a NaN double", "CAST('NaN' AS DOUBLE PRECISION)", "nan", null),
  value("an infinite double", "CAST('Infinity' AS DOUBLE PRECISION)", "inf", null),
  value("a double", "CAST(0.1 AS DOUBLE PRECISION)", "toFloat64(0.1)", 0.1),
  value("NULL", "CAST(NULL AS INTEGER)", "CAST(NULL AS Nullable(Int32))", null)
]
