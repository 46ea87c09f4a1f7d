/**
 * A small multi-tenant API served over MCP for the tests: API keys for two tenants and an admin, a
 * tenant-filtered row source, guarded and opted-out endpoints, a rate-limited one, and a recorder of
 * the query events and of the rows each handler was asked for.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Schema } from "effect"
import { apiKeyAuth, createFetchHandler, initServe, rateLimit, type ServeHandler, type ServeQueryEvent, type ServeRequest } from "queryserve"

export const KEYS = {
  acme: "acme-key",
  globex: "globex-key",
  admin: "admin-key"
} as const

const CALLERS = {
  [KEYS.acme]: { name: "Acme", tenantId: "acme", roles: ["analyst"] },
  [KEYS.globex]: { name: "Globex", tenantId: "globex", roles: ["analyst"] },
  [KEYS.admin]: { name: "Admin", roles: ["admin"] }
}

export const ORDERS = [
  { id: 1, tenant: "acme", amount: 120 },
  { id: 2, tenant: "globex", amount: 75 },
  { id: 3, tenant: "acme", amount: 30 },
  { id: 4, tenant: "globex", amount: 990 }
] as const

const Order = Schema.Struct({ id: Schema.Number, tenant: Schema.String, amount: Schema.Number })

export const makeApi = () => {
  const events: Array<ServeQueryEvent> = []
  const calls = { orders: 0, internal: 0 }
  const { query, define } = initServe({
    auth: apiKeyAuth({ keys: CALLERS }),
    tenant: { extract: (auth) => auth?.tenantId as string | undefined },
    queryLogging: (event) => events.push(event),
    mcp: { name: "orders-api", version: "2.1.0", instructions: "Amounts are in cents." }
  })
  const api = define({
    queries: {
      orders: query
        .summary("Orders of your tenant")
        .describe("The tenant's orders, largest first.")
        .input(Schema.Struct({ minAmount: Schema.optional(Schema.Number) }))
        .output(Schema.Array(Order))
        .query(({ input, ctx }) => {
          calls.orders++
          return ORDERS.filter((row) => row.tenant === ctx.tenantId && row.amount >= (input.minAmount ?? 0))
            .sort((a, b) => b.amount - a.amount)
        }),
      total: query
        .output(Schema.Struct({ tenant: Schema.String, amount: Schema.Number }))
        .query(({ ctx }) => ({
          tenant: ctx.tenantId ?? "",
          amount: ORDERS.filter((row) => row.tenant === ctx.tenantId).reduce((sum, row) => sum + row.amount, 0)
        })),
      allTenants: query.requireRole("admin").tenant(false).summary("Every tenant's orders").query(() => ORDERS),
      note: query
        .method("POST")
        .input(Schema.Struct({ text: Schema.String.pipe(Schema.minLength(1)) }))
        .query(({ input, ctx }) => ({ saved: input.text, by: ctx.tenantId })),
      limited: query.use(rateLimit({ max: 2, windowMs: 60_000 })).query(({ ctx }) => ({ address: ctx.request.remoteAddress ?? null })),
      version: query.public().query(() => "2.1.0"),
      // Opted out twice over: on the builder, and on a plain config.
      internal: query.mcp(false).query(() => {
        calls.internal++
        return "internal"
      }),
      debug: { mcp: false, query: () => "debug" }
    }
  })
  return { api, events, calls }
}

export type McpTestApi = ReturnType<typeof makeApi>["api"]

export interface McpTarget {
  /** The MCP endpoint's URL (over loopback, or a fake origin the fetch handler answers). */
  readonly url: URL
  /** Undefined: the global fetch over the network. */
  readonly fetch: ((url: string | URL, init?: RequestInit) => Promise<Response>) | undefined
  close(): Promise<void>
}

/** The API on a real Node server (`start()`) on a free loopback port. */
export const nodeTarget = async (api: McpTestApi): Promise<McpTarget> => {
  const server = await api.start({ port: 0, hostname: "127.0.0.1" })
  return { url: new URL(`${server.url}/api/analytics/mcp`), fetch: undefined, close: () => server.stop() }
}

/** The API behind `createFetchHandler`: every request of the client goes to the handler, no socket. */
export const fetchTarget = (api: McpTestApi): McpTarget => {
  const handler = createFetchHandler(api.handler)
  return {
    url: new URL("http://mcp.test/api/analytics/mcp"),
    fetch: (url, init) => handler(new Request(url, init)),
    close: () => Promise.resolve()
  }
}

/** A connected SDK client that sends `headers` (the API key) on every request. */
export const connectClient = async (target: McpTarget, headers: Record<string, string>): Promise<Client> => {
  const client = new Client({ name: "queryserve-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(target.url, {
    requestInit: { headers },
    ...(target.fetch === undefined ? {} : { fetch: target.fetch })
  })
  await client.connect(transport)
  return client
}

export const keyHeader = (key: string): Record<string, string> => ({ "x-api-key": key })

/** The ErrorEnvelope a failed tool call carries as its text. */
export const envelopeOf = (result: CallToolResult): { error: { type: string; message: string; details?: Record<string, unknown> } } => {
  const first = result.content[0]
  if (result.isError !== true || first?.type !== "text") throw new Error(`expected an error result, got ${JSON.stringify(result)}`)
  return JSON.parse(first.text)
}

export const MCP = "/api/analytics/mcp"
export const STREAMABLE = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** A JSON-RPC request; a notification with `id` null. */
export const rpc = (method: string, params?: Record<string, unknown>, id: number | string | null = 1) =>
  ({ jsonrpc: "2.0", ...(id === null ? {} : { id }), method, ...(params === undefined ? {} : { params }) })

/** One MCP HTTP request through the handler, as an adapter hands it over. */
export const mcpPost = async (handler: ServeHandler, body: unknown, headers: Record<string, string> = {}) => {
  const request: ServeRequest = {
    method: "POST",
    path: MCP,
    headers: { ...STREAMABLE, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    remoteAddress: "127.0.0.1"
  }
  const response = await handler(request)
  return { ...response, json: response.body === null || response.body === "" ? null : JSON.parse(response.body) }
}
