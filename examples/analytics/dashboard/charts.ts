/**
 * Revenue over time and by region for the caller's tenant: two questions asked of the `orders`
 * dataset, which no endpoint was written for in this shape.
 */
import type { DatasetQuery, DatasetRow } from "queryserve/react"
import { createElement as h, type ReactElement } from "react"
import { Bar, BarChart, CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts"
import { formatCompactMoney, formatCount, formatMoney, formatMonth } from "./format.js"
import type { DemoHooks } from "./hooks.js"
import { OrdersTable } from "./ordersTable.js"
import { problemView } from "./problem.js"

const BY_MONTH: DatasetQuery = { dimensions: ["day.month"], measures: ["revenue", "orders"] }
const BY_REGION: DatasetQuery = {
  dimensions: ["region"],
  measures: ["revenue", "orders"],
  orderBy: [{ field: "revenue", direction: "desc" }]
}

const CHART_HEIGHT = 260
const ACCENT = "#2563eb"

const sum = (rows: ReadonlyArray<DatasetRow>, field: string): number => rows.reduce((total, row) => total + Number(row[field]), 0)

const stat = (testId: string, label: string, value: string) =>
  h("div", { className: "stat" }, h("span", null, label), h("strong", { "data-testid": testId }, value))

const panel = (title: string, testId: string, chart: ReactElement) =>
  h("section", { className: "panel", "data-testid": testId }, h("h2", null, title), h(ResponsiveContainer, { width: "100%", height: CHART_HEIGHT, children: chart }))

const revenueByMonth = (rows: ReadonlyArray<DatasetRow>) =>
  h(
    LineChart,
    { data: rows, margin: { top: 8, right: 16, bottom: 0, left: 8 } },
    h(CartesianGrid, { stroke: "#e5e7eb", vertical: false }),
    h(XAxis, { dataKey: "day.month", tickFormatter: formatMonth }),
    h(YAxis, { tickFormatter: formatCompactMoney, width: 64 }),
    h(Tooltip, { formatter: formatMoney, labelFormatter: formatMonth }),
    h(Line, { dataKey: "revenue", name: "Revenue", stroke: ACCENT, strokeWidth: 2, dot: false, isAnimationActive: false })
  )

const revenueByRegion = (rows: ReadonlyArray<DatasetRow>) =>
  h(
    BarChart,
    { data: rows, margin: { top: 8, right: 16, bottom: 0, left: 8 } },
    h(CartesianGrid, { stroke: "#e5e7eb", vertical: false }),
    h(XAxis, { dataKey: "region" }),
    h(YAxis, { tickFormatter: formatCompactMoney, width: 64 }),
    h(Tooltip, { formatter: formatMoney }),
    h(Bar, { dataKey: "revenue", name: "Revenue", fill: ACCENT, isAnimationActive: false })
  )

/** The charts, the totals and the orders table of one caller, or why they cannot be shown. */
export const TenantCharts = ({ hooks }: { readonly hooks: DemoHooks }) => {
  const byMonth = hooks.useDataset("orders", BY_MONTH)
  const byRegion = hooks.useDataset("orders", BY_REGION)
  const problem = problemView({
    failure: byMonth.error ?? byMonth.failureReason ?? byRegion.error ?? byRegion.failureReason,
    retrying: byMonth.isFetching || byRegion.isFetching,
    failureCount: Math.max(byMonth.failureCount, byRegion.failureCount),
    retry: () => {
      void byMonth.refetch()
      void byRegion.refetch()
    }
  })
  if (problem !== undefined) return problem
  if (byMonth.data === undefined || byRegion.data === undefined) return h("p", { className: "loading" }, "Loading…")
  const regions = byRegion.data.data
  return h(
    "div",
    { className: "charts" },
    h(
      "div",
      { className: "stats" },
      stat("total-revenue", "Revenue", formatMoney(sum(regions, "revenue"))),
      stat("total-orders", "Orders", formatCount(sum(regions, "orders"))),
      stat("regions", "Regions", formatCount(regions.length))
    ),
    h(
      "div",
      { className: "panels" },
      panel("Revenue per month", "revenue-by-month", revenueByMonth(byMonth.data.data)),
      panel("Revenue per region", "revenue-by-region", revenueByRegion(regions))
    ),
    h(OrdersTable, { hooks })
  )
}
