import { Ajv2020 } from "ajv/dist/2020.js"
import { Schema } from "effect"
import { createFetchHandler, initServe } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectClient, type McpTarget } from "./support/api.js"

// `Schema.Int` is a named definition: its JSON Schema is a `$ref` to `#/$defs/Int`, which must still
// resolve once the row schema sits under a page's `data`.
const Row = Schema.Struct({ id: Schema.Int, region: Schema.String })
const ROWS = Array.from({ length: 12 }, (_, id) => ({ id, region: id % 2 === 0 ? "eu" : "us" }))

const { query, define } = initServe({ mcp: { name: "paged", version: "1.0.0" } })
const api = define({
  queries: {
    orders: query
      .output(Schema.Array(Row))
      .paginate({ defaultLimit: 5 })
      .query(({ ctx }) => ROWS.slice(ctx.page.offset, ctx.page.offset + ctx.page.limit + 1))
  }
})
const handler = createFetchHandler(api.handler)
const target: McpTarget = {
  url: new URL("http://mcp.test/api/analytics/mcp"),
  fetch: (url, init) => handler(new Request(url, init)),
  close: () => Promise.resolve()
}

/** Every `$ref` in `node`, each a JSON pointer into the same document. */
const refsIn = (node: unknown): Array<string> =>
  typeof node !== "object" || node === null
    ? []
    : Object.entries(node).flatMap(([key, value]) => (key === "$ref" && typeof value === "string" ? [value] : refsIn(value)))

const resolve = (root: unknown, ref: string): unknown =>
  ref
    .replace(/^#\/?/, "")
    .split("/")
    .filter((segment) => segment.length > 0)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, segment) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[segment] : undefined), root)

describe("the schema of a paginated endpoint's answer", () => {
  let client: Awaited<ReturnType<typeof connectClient>>
  beforeAll(async () => {
    client = await connectClient(target, {})
  })
  afterAll(async () => {
    await client?.close()
    await api.dispose()
  })

  it("gives its MCP tool an output schema whose references resolve, and which a real page satisfies", async () => {
    const { tools } = await client.listTools()
    const outputSchema = tools.find((tool) => tool.name === "orders")?.outputSchema
    expect(outputSchema).toMatchObject({ type: "object", required: ["data", "page"], $defs: { Int: { type: "integer" } } })
    expect(JSON.stringify(outputSchema)).not.toContain("$schema")
    const refs = refsIn(outputSchema)
    expect(refs).toContain("#/$defs/Int")
    for (const ref of refs) expect(resolve(outputSchema, ref), ref).toBeDefined()

    const validate = new Ajv2020({ strict: false }).compile(outputSchema!)
    const result = await client.callTool({ name: "orders", arguments: { limit: 3 } })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ data: ROWS.slice(0, 3), page: { limit: 3, hasMore: true } })
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ data: [{ id: 1.5, region: "eu" }], page: { limit: 3, nextCursor: null, hasMore: false } })).toBe(false)
  })

  it("resolves every reference of the OpenAPI document from its root", async () => {
    const document = (await (await handler(new Request("http://mcp.test/api/analytics/openapi.json"))).json()) as unknown
    const refs = refsIn(document)
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) expect(resolve(document, ref), ref).toBeDefined()
  })
})
