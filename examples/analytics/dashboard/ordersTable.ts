/**
 * The caller's orders, newest first, a page at a time: the `orders` dataset grouped by order id
 * (one row per order), read forwards by the answers' cursors. The cursors of the pages seen are
 * kept, so "Previous" asks for a page again (from the cache, for a minute) instead of needing a
 * backwards cursor.
 */
import { keepPreviousData } from "@tanstack/react-query"
import type { DatasetQuery } from "queryserve/react"
import { createElement as h, useState } from "react"
import { formatAmount, formatCount } from "./format.js"
import type { DemoHooks } from "./hooks.js"
import { problemView } from "./problem.js"

const PAGE_ROWS = 10

const ORDERS: DatasetQuery = {
  dimensions: ["order_id", "day", "region", "product_id"],
  measures: ["revenue"],
  orderBy: [{ field: "day", direction: "desc" }, { field: "order_id", direction: "desc" }],
  limit: PAGE_ROWS
}

const COLUMNS = [
  ["order_id", "Order", String],
  ["day", "Day", String],
  ["region", "Region", String],
  ["product_id", "Product", String],
  ["revenue", "Amount", formatAmount]
] as const

export const OrdersTable = ({ hooks }: { readonly hooks: DemoHooks }) => {
  // The cursors that asked for the pages after the first; the last one is the page on screen.
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  const cursor = cursors.at(-1)
  const orders = hooks.useDataset("orders", cursor === undefined ? ORDERS : { ...ORDERS, cursor }, { placeholderData: keepPreviousData })
  const problem = problemView({
    failure: orders.error ?? orders.failureReason,
    retrying: orders.isFetching,
    failureCount: orders.failureCount,
    retry: () => void orders.refetch()
  })
  const page = orders.data?.page
  const next = page?.hasMore === true ? page.nextCursor : null
  return h(
    "section",
    { className: "panel orders", "data-testid": "orders" },
    h("h2", null, "Orders"),
    problem ??
      h(
        "table",
        null,
        h("thead", null, h("tr", null, ...COLUMNS.map(([, label]) => h("th", { key: label }, label)))),
        h(
          "tbody",
          null,
          ...(orders.data?.data ?? []).map((row) =>
            h("tr", { key: String(row.order_id) }, ...COLUMNS.map(([field, , format]) => h("td", { key: field }, format(row[field]))))
          )
        )
      ),
    h(
      "nav",
      { className: "pager" },
      h("button", { type: "button", disabled: cursors.length === 0, onClick: () => setCursors(cursors.slice(0, -1)) }, "Previous"),
      h("span", { "data-testid": "orders-page" }, `Page ${formatCount(cursors.length + 1)}`),
      h("button", { type: "button", disabled: next === null || orders.isPlaceholderData, onClick: () => next !== null && setCursors([...cursors, next]) }, "Next")
    )
  )
}
