/**
 * Input and output schemas of the demo's endpoints. Inputs are checked here, before any SQL runs:
 * DuckDB's date cast is lenient ("2025-03-01 junk" reads as a date) and a wrong date is a
 * conversion error deep in the query, so days must be real calendar days in `YYYY-MM-DD`, in
 * years every engine holds (SHARED_YEARS).
 * Outputs describe the rows each metric returns, for the OpenAPI document and typed clients.
 */
import { type ParseResult, Schema } from "effect"
import { REGIONS } from "./dataset.js"
import { GRANULARITIES, TOP_PRODUCTS_MAX } from "./metrics.js"

const DAY_DIGITS = /^(\d{4})-(\d{2})-(\d{2})$/

const daysIn = (year: number, month: number): number =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31

/** A real day of the (proleptic Gregorian) calendar, by arithmetic: a Date and its ISO text cost several times more per request. */
const isCalendarDay = (text: string): boolean => {
  const parts = DAY_DIGITS.exec(text)
  if (parts === null) return false
  const year = Number(parts[1])
  const month = Number(parts[2])
  const day = Number(parts[3])
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

/**
 * The years whose every day Postgres, DuckDB and ClickHouse all hold. ClickHouse's Date spans
 * 1970-01-01 to 2149-06-06 and turns a day outside into the nearer end, so `day <= '1969-12-31'`
 * would match 1970-01-01; Postgres has no year 0 (a 500 there). DuckDB holds them all.
 */
const SHARED_YEARS = { first: 1970, last: 2148 } as const

const inSharedYears = (text: string): boolean => {
  const year = Number(text.slice(0, 4))
  return year >= SHARED_YEARS.first && year <= SHARED_YEARS.last
}

const YEARS_TEXT = `years ${SHARED_YEARS.first} to ${SHARED_YEARS.last}`

// Messages in the style of queryserve's own: what was expected, then what was sent.
const got = (issue: ParseResult.ParseIssue): string => JSON.stringify(issue.actual)

const Day = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: (issue) => `expected a day as YYYY-MM-DD, got ${got(issue)}` }),
  // The JSON Schema annotation makes docs show this refinement (and its descriptions), not only the pattern.
  Schema.filter(isCalendarDay, { message: (issue) => `expected an existing calendar day, got ${got(issue)}`, jsonSchema: { format: "date" } }),
  Schema.filter(inSharedYears, {
    message: (issue) => `expected a year from ${SHARED_YEARS.first} to ${SHARED_YEARS.last}, got ${got(issue)}`,
    // Nothing to add to the JSON Schema, but without the annotation docs drop the descriptions.
    jsonSchema: {}
  })
).annotations({ description: `A calendar day, YYYY-MM-DD, ${YEARS_TEXT} (the demo data covers 2025)`, examples: ["2025-03-01"] })

const dateRangeFields = {
  from: Day.annotations({ description: `First day, inclusive (YYYY-MM-DD, ${YEARS_TEXT})` }),
  to: Day.annotations({ description: `Last day, inclusive (YYYY-MM-DD, ${YEARS_TEXT})` })
}

/** Refuses a range whose `from` is after its `to`. */
const ordered = <A extends { readonly from: string; readonly to: string }, I, R>(schema: Schema.Schema<A, I, R>) =>
  schema.pipe(Schema.filter((range) => range.from <= range.to, {
    message: () => "expected `from` on or before `to`"
  }))

/** One of `values`; a value that is none of them gets one issue naming them all. */
const oneOf = <const Values extends ReadonlyArray<string>>(values: Values, description: string) =>
  Schema.Literal(...values).annotations({ description })

const OnlyRegion = Schema.optionalWith(oneOf(REGIONS, "Only this sales region"), { exact: true })

/** An optional integer in [min, max], `fallback` when absent (documented as its `default`). */
const boundedInt = (min: number, max: number, fallback: number, description: string) =>
  Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(min, max)).annotations({ description }), {
    default: () => fallback,
    exact: true
  })

export const DateRangeInput = ordered(Schema.Struct(dateRangeFields))

export const RevenueByDayInput = ordered(Schema.Struct({ ...dateRangeFields, region: OnlyRegion }))

export const TopProductsInput = ordered(
  Schema.Struct({
    ...dateRangeFields,
    limit: boundedInt(1, TOP_PRODUCTS_MAX, 10, `How many products, 1 to ${TOP_PRODUCTS_MAX}`)
  })
)

export const ActiveCustomersInput = ordered(
  Schema.Struct({
    ...dateRangeFields,
    granularity: Schema.optionalWith(oneOf(GRANULARITIES, "Period length; weeks start on Monday"), {
      default: () => "week" as const,
      exact: true
    })
  })
)

export const OrdersExportInput = ordered(
  Schema.Struct({
    ...dateRangeFields,
    region: OnlyRegion,
    maxRows: Schema.optionalWith(
      Schema.Number.pipe(Schema.int(), Schema.between(1, Number.MAX_SAFE_INTEGER)).annotations({
        description: "At most this many orders, the oldest; without it, every order of the range"
      }),
      { exact: true }
    )
  })
)

export const OrdersPageInput = ordered(Schema.Struct({ ...dateRangeFields, region: OnlyRegion }))

export const NoInput = Schema.Struct({})

const rows = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.Array(Schema.Struct(fields))

// Outputs are described, not re-validated value by value: DuckDB already typed every column.
const DayText = Schema.String.annotations({ description: "A calendar day, YYYY-MM-DD" })
const RegionText = Schema.String.annotations({ description: "Sales region" })
const Money = Schema.Number.annotations({ description: "Amount in the tenant's currency" })
const Percent = Schema.Number.annotations({ description: "Percentage, 0 to 100, two decimals" })

export const RevenueByDayOutput = rows({ day: DayText, orders: Schema.Int, revenue: Money })

export const RevenueByRegionOutput = rows({ region: RegionText, orders: Schema.Int, customers: Schema.Int, revenue: Money })

export const TopProductsOutput = rows({
  product_id: Schema.Int,
  product: Schema.String,
  category: Schema.String,
  units: Schema.Int,
  revenue: Money
})

export const ActiveCustomersOutput = rows({
  period: DayText.annotations({ description: "First day of the period" }),
  active_customers: Schema.Int
})

export const CohortRetentionOutput = rows({
  cohort: DayText.annotations({ description: "Month of the customers' first order (its first day)" }),
  cohort_size: Schema.Int,
  month_offset: Schema.Int.annotations({ description: "Months after the cohort month" }),
  customers: Schema.Int.annotations({ description: "Customers of the cohort who ordered in that month" }),
  retention_pct: Percent
})

export const FunnelOutput = rows({
  step_index: Schema.Int,
  step: Schema.String,
  sessions: Schema.Int,
  conversion_pct: Percent.annotations({ description: "Share of the previous step's sessions" }),
  overall_pct: Percent.annotations({ description: "Share of the first step's sessions" })
})

export const OrderValuePercentilesOutput = rows({
  region: RegionText,
  orders: Schema.Int,
  avg: Money,
  p50: Money,
  p90: Money,
  p99: Money
})

export const OrdersExportOutput = rows({
  order_id: Schema.Int,
  day: DayText,
  region: RegionText,
  product: Schema.String,
  quantity: Schema.Int,
  amount: Money
})

export const TenantSummaryOutput = rows({
  tenant_id: Schema.String,
  name: Schema.String,
  plan: Schema.String,
  customers: Schema.Int,
  orders: Schema.Int,
  revenue: Money,
  avg_order_value: Schema.NullOr(Money),
  first_order_day: Schema.NullOr(DayText),
  last_order_day: Schema.NullOr(DayText)
})

export const TenantsOverviewOutput = rows({
  tenant_id: Schema.String,
  orders: Schema.Int,
  active_customers: Schema.Int,
  revenue: Money,
  revenue_share_pct: Percent
})
