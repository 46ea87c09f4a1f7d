import { defineServe, type ServeQueryEvent } from "queryserve"
import { describe, expect, it } from "vitest"
import { mcpPost, rpc } from "../mcp/support/api.js"
import { get } from "./support/requests.js"

describe("result cache and MCP tool calls", () => {
  it("serves a tool call from the entry an HTTP request stored (and back), as a plain result", async () => {
    let runs = 0
    const events: Array<ServeQueryEvent> = []
    const api = defineServe({
      resultCache: true,
      mcp: true,
      queries: { totals: { cacheTtlMs: 60_000, query: ({ input }: { input: { region?: string } }) => ({ region: input.region ?? "all", run: ++runs }) } }
    })
    api.queryLogger.on((event) => events.push(event))
    const http = await api.handler(get("totals", { region: "eu" }))
    const tool = await mcpPost(api.handler, rpc("tools/call", { name: "totals", arguments: { region: "eu" } }))
    expect(tool.json.result.content).toEqual([{ type: "text", text: http.body }])
    expect(JSON.parse(tool.json.result.content[0].text)).toEqual({ region: "eu", run: 1 })
    const other = await mcpPost(api.handler, rpc("tools/call", { name: "totals", arguments: { region: "us" } }))
    expect(JSON.parse(other.json.result.content[0].text)).toEqual({ region: "us", run: 2 })
    expect((await api.handler(get("totals", { region: "us" }))).headers["x-cache"]).toBe("HIT")
    expect(runs).toBe(2)
    const completed = events.filter((event) => event.status === "completed")
    expect(completed.map((event) => [event.transport, event.cacheHit])).toEqual([["http", false], ["mcp", true], ["mcp", false], ["http", true]])
  })
})
