/**
 * The demo's `orders` dataset: the questions no endpoint was written for, over the same `orders`
 * table every engine of the demo holds. Each tenant sees its own rows only; the admin key, which
 * has no tenant, sees every tenant's, as the admin-only `tenantsOverview` endpoint does.
 */
import { dataset, dimension, measure } from "queryserve"

export const ordersDataset = dataset("orders", {
  source: "orders",
  tenantKey: "tenant_id",
  allowUnscoped: (auth) => auth?.roles?.includes("admin") === true,
  description: "One row per order: its id, region, day, product and amount",
  dimensions: {
    order_id: dimension.number(),
    region: dimension.string(),
    day: dimension.time({ column: "day" }),
    product_id: dimension.number()
  },
  measures: {
    revenue: measure.sum("amount"),
    orders: measure.count(),
    customers: measure.countDistinct("customer_id"),
    avgOrder: measure.avg("amount")
  }
})
