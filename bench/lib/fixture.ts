/**
 * The one endpoint every peer serves, and the exact bytes it must answer.
 *
 * GET  /api/analytics/revenue?region=eu            → revenueFor(region)
 * POST /api/analytics/revenue-report {"region","limit"} → reportFor(region, limit)
 *
 * `region` is one of REGIONS; `limit` an integer 1..100. Anything else is a 400.
 * Every server builds its answer with these functions and serialises it with
 * JSON.stringify (or its framework's equivalent), so all answer the same body.
 */

export const BASE_PATH = "/api/analytics";
export const GET_PATH = `${BASE_PATH}/revenue`;
export const POST_PATH = `${BASE_PATH}/revenue-report`;
export const GET_QUERY = "?region=eu";
export const GET_URL_PATH = `${GET_PATH}${GET_QUERY}`;
export const POST_BODY = JSON.stringify({ region: "eu", limit: 10 });

/** Header and key the queryserve "full" setups expect. */
export const API_KEY_HEADER = "x-api-key";
export const API_KEY = "bench-key-0123456789";
export const REQUIRED_ROLE = "analyst";

export const REGIONS = ["eu", "us", "apac"] as const;
export type Region = (typeof REGIONS)[number];

export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;

export interface MonthRevenue {
  readonly month: string;
  readonly revenue: number;
  readonly orders: number;
}

export interface RevenueResult {
  readonly region: Region;
  readonly currency: string;
  readonly total: number;
  readonly months: ReadonlyArray<MonthRevenue>;
}

export interface ReportResult {
  readonly region: Region;
  readonly limit: number;
  readonly rows: ReadonlyArray<MonthRevenue>;
}

const CURRENCY: Readonly<Record<Region, string>> = { eu: "EUR", us: "USD", apac: "SGD" };

const MONTHS: ReadonlyArray<MonthRevenue> = [
  { month: "2024-01", revenue: 18250.5, orders: 412 },
  { month: "2024-02", revenue: 17120.25, orders: 388 },
  { month: "2024-03", revenue: 20411.75, orders: 455 },
  { month: "2024-04", revenue: 19870, orders: 431 },
  { month: "2024-05", revenue: 21005.1, orders: 470 },
  { month: "2024-06", revenue: 22340.9, orders: 498 },
];

const TOTAL = MONTHS.reduce((sum, m) => sum + m.revenue, 0);

export const isRegion = (value: unknown): value is Region =>
  value === "eu" || value === "us" || value === "apac";

export const isLimit = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= LIMIT_MIN && value <= LIMIT_MAX;

/** A fresh object each call, as a real handler would build. */
export const revenueFor = (region: Region): RevenueResult => ({
  region,
  currency: CURRENCY[region],
  total: TOTAL,
  months: MONTHS,
});

export const reportFor = (region: Region, limit: number): ReportResult => ({
  region,
  limit,
  rows: MONTHS.slice(0, limit),
});

export const EXPECTED_GET_BODY = JSON.stringify(revenueFor("eu"));
export const EXPECTED_POST_BODY = JSON.stringify(reportFor("eu", 10));
