// The README example, kept here so `tsc` (run by `npm test`) proves it still type-checks. Never executed.
import { Schema } from "effect"
import { apiKeyAuth, initServe } from "queryserve"
import { createDb } from "../../examples/analytics/sql.js"
declare const db: ReturnType<typeof createDb>
declare const keys: Map<string, { tenantId: string; roles: Array<string> }>

const { query, define } = initServe({
  context: () => ({ db }),                                   // merged into every handler's ctx
  auth: apiKeyAuth({ header: "x-api-key", validate: (key) => keys.get(key) ?? null }),
  tenant: { extract: (auth) => auth?.tenantId, column: "tenant_id", mode: "auto-inject" },
  resultCache: true,                                         // results kept per tenant and input
  metrics: { roles: ["admin"] },                             // Prometheus text at /api/analytics/metrics
  mcp: true                                                  // every endpoint a tool at /api/analytics/mcp
})

const api = define({
  queries: {
    revenueByRegion: query
      .input(Schema.Struct({ from: Schema.String, to: Schema.String }))
      .summary("Revenue per region")
      .requireRole("analyst", "admin")
      .cache(60_000)
      .query(({ input, ctx }) =>
        ctx.db.table("orders").where("day", "gte", input.from).where("day", "lte", input.to).execute())
  }
})

await api.start({ port: 4000 })
const rows = await api.execute("revenueByRegion", { input: { from: "2025-01-01", to: "2025-01-31" } })
export const first = rows[0]
