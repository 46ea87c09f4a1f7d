/**
 * A Cloudflare Worker serving a small queryserve API: API-key auth, one tenant per key, validated
 * inputs, an OpenAPI document and the API-reference page. It imports the package as any Worker does;
 * bundlers (esbuild here, wrangler too) pick queryserve's web build through its `workerd`/`worker`
 * export conditions, so it runs on workerd without `nodejs_compat`.
 *
 * Bundle it with `npx tsx examples/worker/build.ts` (after `npm run build`): see ./build.ts.
 */
import * as Schema from "effect/Schema"
import { apiKeyAuth, createFetchHandler, type FetchHandler, initServe, type ServeAuthContext } from "queryserve"

/** Who an API key belongs to. */
export interface Caller extends ServeAuthContext {
  readonly name: string
  readonly tenantId: string
}

/** The Worker's bindings: `API_KEYS` is a secret holding JSON `{ "<key>": { "name": ..., "tenantId": ... } }`. */
export interface Env {
  readonly API_KEYS: string
}

const Region = Schema.Literal("eu", "us", "apac")
type Region = typeof Region.Type

interface Sale {
  readonly tenantId: string
  readonly region: Region
  readonly month: string
  readonly revenue: number
}

const MONTHS = ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"]
const TENANTS = ["acme", "globex"]
const REGIONS: ReadonlyArray<Region> = ["eu", "us", "apac"]

/** A small in-memory table; a real Worker would read D1, KV or an HTTP database here. */
const SALES: ReadonlyArray<Sale> = TENANTS.flatMap((tenantId, t) =>
  REGIONS.flatMap((region, r) =>
    MONTHS.map((month, m) => ({ tenantId, region, month, revenue: 1000 * (t + 1) + 100 * r + 10 * m }))
  )
)

const salesOf = (tenantId: string | null, region: Region): ReadonlyArray<Sale> =>
  SALES.filter((sale) => sale.tenantId === tenantId && sale.region === region)

export const makeApi = (keys: Readonly<Record<string, Caller>>) => {
  const { query, define } = initServe({
    auth: apiKeyAuth({ keys }),
    // Every endpoint but `health` answers for the caller's tenant only.
    tenant: { extract: (auth) => auth?.tenantId },
    openapi: { info: { title: "Sales API on Workers", version: "1.0.0" } }
  })
  return define({
    basePath: "/api",
    queries: {
      revenue: query
        .summary("Total revenue of a region")
        .input(Schema.Struct({ region: Region }))
        .cache(60_000)
        .query(({ input, ctx }) => {
          const sales = salesOf(ctx.tenantId, input.region)
          return { region: input.region, months: sales.length, total: sales.reduce((sum, sale) => sum + sale.revenue, 0) }
        }),
      topMonths: query
        .method("POST")
        .summary("A region's best months, highest revenue first")
        .input(Schema.Struct({ region: Region, limit: Schema.Int.pipe(Schema.between(1, 12)) }))
        .query(({ input, ctx }) =>
          [...salesOf(ctx.tenantId, input.region)]
            .sort((a, b) => b.revenue - a.revenue)
            .slice(0, input.limit)
            .map(({ month, revenue }) => ({ month, revenue }))
        ),
      health: query.public().tenant(false).summary("Liveness").query(() => ({ ok: true }))
    }
  })
}

// Bindings arrive with the first request, so the API is defined then, once per isolate.
let serve: FetchHandler | undefined

export default {
  fetch: (request: Request, env: Env): Promise<Response> =>
    (serve ??= createFetchHandler(makeApi(JSON.parse(env.API_KEYS) as Record<string, Caller>).handler))(request)
}
