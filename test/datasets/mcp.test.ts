/** The datasets as MCP tools through the official SDK client: list, describe and query, with the same guards and tenancy. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { apiKeyAuth, dataset, defineServe, dimension, measure } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectClient, envelopeOf, fetchTarget, keyHeader } from "../mcp/support/api.js"
import { type DemoDatabase, openDemoDatabase } from "./demoDatabase.js"
import { Orders } from "./ordersModel.js"

let db: DemoDatabase
const clients: Array<Client> = []

const KEYS: Readonly<Record<string, { id: string; tenantId?: string; roles: Array<string> }>> = {
  acme: { id: "a", tenantId: "acme", roles: ["analyst"] },
  globex: { id: "g", tenantId: "globex", roles: ["analyst"] },
  viewer: { id: "v", tenantId: "acme", roles: [] }
}

const Finance = dataset("finance", {
  source: "order_facts",
  tenantKey: "tenant_id",
  roles: ["analyst"],
  dimensions: { region: dimension.string() },
  measures: { revenue: measure.sum("amount") }
})

let api: ReturnType<typeof defineServe>

beforeAll(async () => {
  db = await openDemoDatabase()
  api = defineServe({
    queries: { ping: () => ({ ok: true }) },
    auth: apiKeyAuth({ validate: (key) => KEYS[key] ?? null }),
    tenant: { extract: (auth) => auth?.tenantId },
    datasets: { orders: Orders, finance: Finance },
    sql: db.executor,
    mcp: true
  })
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await db?.close()
})

const connect = async (key: string): Promise<Client> => {
  const client = await connectClient(fetchTarget(api as unknown as Parameters<typeof fetchTarget>[0]), keyHeader(key))
  clients.push(client)
  return client
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, unknown>

describe("MCP dataset tools", () => {
  it("lists list_datasets, describe_dataset and query_dataset beside the endpoints, not one tool per dataset route", async () => {
    const client = await connect("acme")
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(["ping", "list_datasets", "describe_dataset", "query_dataset"])
  })

  it("an agent finds the datasets, learns one and asks it a question, answered for its own tenant", async () => {
    const client = await connect("globex")
    const listed = structured(await client.callTool({ name: "list_datasets", arguments: {} }))
    expect((listed.datasets as Array<{ name: string }>).map((entry) => entry.name)).toEqual(["orders", "finance"])
    const described = structured(await client.callTool({ name: "describe_dataset", arguments: { name: "orders" } }))
    expect((described.measures as Array<{ name: string }>).map((m) => m.name)).toContain("revenue")
    const answer = structured(
      await client.callTool({ name: "query_dataset", arguments: { name: "orders", dimensions: ["region"], measures: ["revenue"] } })
    )
    const expected = await db.sql("SELECT region, sum(amount) AS revenue FROM order_facts WHERE tenant_id = ? GROUP BY region ORDER BY region", "globex")
    expect(answer.data).toEqual(expected.map((row) => ({ region: row.region, revenue: Number(row.revenue) })))
    expect(answer.page).toEqual({ limit: 100, nextCursor: null, hasMore: false })
  })

  it("keeps the dataset's guards: a caller without the role is refused, and does not see it listed", async () => {
    const client = await connect("viewer")
    const listed = structured(await client.callTool({ name: "list_datasets", arguments: {} }))
    expect((listed.datasets as Array<{ name: string }>).map((entry) => entry.name)).toEqual(["orders"])
    const refused = await client.callTool({ name: "query_dataset", arguments: { name: "finance", measures: ["revenue"] } })
    expect(envelopeOf(refused as CallToolResult).error.type).toBe("FORBIDDEN")
  })

  it("refuses an unknown dataset or field, naming the allowed values", async () => {
    const client = await connect("acme")
    const unknown = envelopeOf((await client.callTool({ name: "query_dataset", arguments: { name: "planets", measures: ["revenue"] } })) as CallToolResult)
    expect(unknown.error.type).toBe("VALIDATION_ERROR")
    expect(JSON.stringify(unknown.error.details)).toContain("orders")
    const badField = envelopeOf((await client.callTool({ name: "query_dataset", arguments: { name: "orders", measures: ["profit"] } })) as CallToolResult)
    expect(badField.error.type).toBe("VALIDATION_ERROR")
    expect(JSON.stringify(badField.error.details)).toContain("revenue")
  })
})
