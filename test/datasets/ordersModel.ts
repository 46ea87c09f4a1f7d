/**
 * The dataset the tests query: the demo's orders with their product, as a view (`order_facts`)
 * that every engine can hold, and a model using every kind of dimension and measure.
 */
import { dataset, dimension, measure } from "queryserve"

/** DuckDB view over the demo tables; `category` is null for every tenth order, to have nulls to filter. */
export const ORDER_FACTS_VIEW = `
  CREATE OR REPLACE VIEW order_facts AS
  SELECT o.tenant_id, o.order_id, o.customer_id, o.region, o.day, o.quantity, o.amount,
         p.name AS product_name,
         CASE WHEN o.order_id % 10 = 0 THEN NULL ELSE p.category END AS category,
         o.quantity > 1 AS multi
  FROM orders o JOIN products p USING (product_id)`

export const Orders = dataset("orders", {
  source: "order_facts",
  tenantKey: "tenant_id",
  description: "One row per order",
  dimensions: {
    region: dimension.string(),
    category: dimension.string(),
    product: dimension.string({ column: "product_name", label: "Product" }),
    day: dimension.time(),
    quantity: dimension.number(),
    multi: dimension.boolean({ description: "More than one item" })
  },
  measures: {
    revenue: measure.sum("amount"),
    orders: measure.count(),
    customers: measure.countDistinct("customer_id"),
    avgOrder: measure.avg("amount"),
    minOrder: measure.min("amount"),
    maxOrder: measure.max("amount"),
    revenuePerCustomer: measure.ratio("revenue", "customers")
  }
})
