import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  connectClient,
  envelopeOf,
  fetchTarget,
  KEYS,
  keyHeader,
  makeApi,
  type McpTarget,
  nodeTarget,
  ORDERS
} from "./support/api.js"

// The same tests through a real Node server (start()) and through createFetchHandler: one code path.
describe.each([
  ["a Node server (start)", nodeTarget],
  ["createFetchHandler", (api: ReturnType<typeof makeApi>["api"]) => Promise.resolve(fetchTarget(api))]
] as const)("MCP through %s", (_label, makeTarget) => {
  let fixture: ReturnType<typeof makeApi>
  let target: McpTarget
  let acme: Client
  let globex: Client
  let admin: Client

  beforeAll(async () => {
    fixture = makeApi()
    target = await makeTarget(fixture.api)
    ;[acme, globex, admin] = await Promise.all([
      connectClient(target, keyHeader(KEYS.acme)),
      connectClient(target, keyHeader(KEYS.globex)),
      connectClient(target, keyHeader(KEYS.admin))
    ])
  })

  afterAll(async () => {
    await Promise.all([acme?.close(), globex?.close(), admin?.close()])
    await fixture.api.dispose()
    await target?.close()
  })

  it("initializes with the configured name, version, instructions and the tools capability", () => {
    expect(acme.getServerVersion()).toEqual({ name: "orders-api", version: "2.1.0" })
    expect(acme.getInstructions()).toBe("Amounts are in cents.")
    expect(acme.getServerCapabilities()).toEqual({ tools: { listChanged: false } })
  })

  it("lists one tool per endpoint with its description, schemas and readOnlyHint", async () => {
    const { tools } = await acme.listTools()
    const orders = tools.find((tool) => tool.name === "orders")
    expect(orders).toEqual({
      name: "orders",
      title: "Orders of your tenant",
      description: "Orders of your tenant\n\nThe tenant's orders, largest first.",
      inputSchema: { type: "object", properties: { minAmount: { type: "number" } }, required: [], additionalProperties: false },
      // An array result is wrapped: MCP's structured content is an object.
      outputSchema: {
        type: "object",
        properties: {
          result: {
            type: "array",
            items: {
              type: "object",
              required: ["id", "tenant", "amount"],
              properties: { id: { type: "number" }, tenant: { type: "string" }, amount: { type: "number" } },
              additionalProperties: false
            }
          }
        },
        required: ["result"]
      },
      annotations: { readOnlyHint: true }
    })
    // No input schema: any object; a POST endpoint is not read-only; an object result keeps its own schema.
    expect(tools.find((tool) => tool.name === "version")).toEqual({ name: "version", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } })
    expect(tools.find((tool) => tool.name === "note")?.annotations).toBeUndefined()
    expect(tools.find((tool) => tool.name === "total")?.outputSchema).toMatchObject({ type: "object", required: ["tenant", "amount"] })
  })

  it("lists only the tools whose guards the caller passes, and never the opted-out ones", async () => {
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name)
    // allTenants needs the admin role; the admin has no tenant, so the tenant-scoped tools are hidden from them.
    expect(await names(acme)).toEqual(["orders", "total", "note", "limited", "version"])
    expect(await names(admin)).toEqual(["allTenants", "version"])
  })

  it("calls a tool through the endpoint's stages: structuredContent and the JSON text", async () => {
    const result = await acme.callTool({ name: "orders", arguments: { minAmount: 50 } })
    const rows = ORDERS.filter((row) => row.tenant === "acme" && row.amount >= 50)
    expect(result).toEqual({ content: [{ type: "text", text: JSON.stringify(rows) }], structuredContent: { result: rows } })
    const total = await acme.callTool({ name: "total", arguments: {} })
    expect(total.structuredContent).toEqual({ tenant: "acme", amount: 150 })
    // Without an output schema there is only the text.
    expect(await acme.callTool({ name: "version" })).toEqual({ content: [{ type: "text", text: '"2.1.0"' }] })
  })

  it("keeps each tenant to its own rows: acme's key never sees globex rows through a tool", async () => {
    const seen = async (client: Client) => {
      const result = await client.callTool({ name: "orders", arguments: {} })
      return (result.structuredContent as { result: Array<{ tenant: string }> }).result.map((row) => row.tenant)
    }
    expect(await seen(acme)).toEqual(["acme", "acme"])
    expect(await seen(globex)).toEqual(["globex", "globex"])
    const note = await globex.callTool({ name: "note", arguments: { text: "hello" } })
    expect(JSON.parse((note.content as Array<{ text: string }>)[0]!.text)).toEqual({ saved: "hello", by: "globex" })
  })

  it("answers a guarded tool the caller cannot use with the endpoint's 403 envelope", async () => {
    const result = await acme.callTool({ name: "allTenants", arguments: {} })
    expect(envelopeOf(result as never).error).toMatchObject({ type: "FORBIDDEN", details: { reason: "missing_role", required: ["admin"] } })
    const tenantless = await admin.callTool({ name: "orders", arguments: {} })
    expect(envelopeOf(tenantless as never).error).toMatchObject({ type: "FORBIDDEN", details: { reason: "missing_tenant" } })
    expect((await admin.callTool({ name: "allTenants", arguments: {} })).content).toEqual([{ type: "text", text: JSON.stringify(ORDERS) }])
  })

  it("refuses opted-out endpoints as unknown tools, without running them", async () => {
    const before = fixture.calls.internal
    await expect(acme.callTool({ name: "internal", arguments: {} })).rejects.toThrow(/Unknown tool: internal/)
    await expect(acme.callTool({ name: "debug", arguments: {} })).rejects.toThrow(/Unknown tool: debug/)
    expect(fixture.calls.internal).toBe(before)
  })

  it("answers invalid arguments with the VALIDATION_ERROR envelope and its issues", async () => {
    const result = await acme.callTool({ name: "orders", arguments: { minAmount: "lots" } })
    expect(envelopeOf(result as never).error).toEqual({
      type: "VALIDATION_ERROR",
      message: "Input failed validation",
      details: { issues: [{ path: ["minAmount"], message: 'expected a number, got "lots"' }] }
    })
    expect(envelopeOf((await acme.callTool({ name: "note", arguments: { text: "" } })) as never).error.type).toBe("VALIDATION_ERROR")
  })

  it("applies the endpoint's rate limit to tool calls", async () => {
    const first = await globex.callTool({ name: "limited", arguments: {} })
    expect(first.isError).toBeUndefined()
    await globex.callTool({ name: "limited", arguments: {} })
    const third = await globex.callTool({ name: "limited", arguments: {} })
    expect(envelopeOf(third as never).error).toMatchObject({ type: "RATE_LIMITED", details: { retryAfterSeconds: 60 } })
  })

  it("reports every tool call as a query event marked with the mcp transport", async () => {
    const from = fixture.events.length
    await acme.callTool({ name: "total", arguments: {} })
    await acme.callTool({ name: "orders", arguments: { minAmount: "x" } })
    const events = fixture.events.slice(from).filter((event) => event.status !== "started")
    expect(events).toMatchObject([
      { endpointKey: "total", method: "GET", path: "/api/analytics/total", status: "completed", responseStatus: 200, transport: "mcp" },
      { endpointKey: "orders", status: "error", responseStatus: 400, transport: "mcp" }
    ])
    // The endpoint's own route says so too; an in-process call says nothing.
    await fixture.api.handler({ method: "GET", path: "/api/analytics/version", headers: {} })
    await fixture.api.execute("version")
    const finished = fixture.events.filter((event) => event.status !== "started")
    expect(finished.slice(-2).map((event) => event.transport)).toEqual(["http", undefined])
  })
})
