/** One MCP HTTP request carrying many messages: refused whole past mcp.maxBatch; within it, each tool call counts against rate limits. */
import { defineServe, rateLimit } from "queryserve"
import { describe, expect, it } from "vitest"
import { mcpPost, rpc } from "./support/api.js"

const makeApi = (maxBatch?: number) => {
  const runs = { count: 0 }
  const api = defineServe({
    queries: {
      ping: {
        middlewares: [rateLimit({ max: 2, windowMs: 60_000 })],
        query: () => {
          runs.count++
          return { ok: true }
        }
      }
    },
    mcp: maxBatch === undefined ? true : { maxBatch }
  })
  return { api, runs }
}

const calls = (n: number) => Array.from({ length: n }, (_, i) => rpc("tools/call", { name: "ping", arguments: {} }, i + 1))

describe("MCP batches", () => {
  it("a request of more than mcp.maxBatch messages (default 10) is refused whole: 400, a JSON-RPC error, none run", async () => {
    const { api, runs } = makeApi()
    const response = await mcpPost(api.handler, calls(11))
    expect(response.status).toBe(400)
    expect(response.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "One request may carry at most 10 JSON-RPC messages (mcp.maxBatch); this one carries 11" }
    })
    expect(runs.count).toBe(0)
  })

  it("each tools/call of a batch counts against the endpoint's rate limit", async () => {
    const { api, runs } = makeApi(5)
    const response = await mcpPost(api.handler, calls(3))
    expect(response.status).toBe(200)
    const results = (response.json as Array<{ id: number; result: { isError?: boolean; content: Array<{ text: string }> } }>)
      .sort((a, b) => a.id - b.id)
      .map(({ result }) => (result.isError === true ? JSON.parse(result.content[0]!.text).error.type : "ok"))
    expect(results).toEqual(["ok", "ok", "RATE_LIMITED"])
    expect(runs.count).toBe(2)
  })

  it("a maxBatch that could not work is an Error at define time", () => {
    expect(() => makeApi(0)).toThrow(/mcp.maxBatch must be a whole number/)
  })
})

describe("MCP and streamed answers", () => {
  const streamingApi = (count: number) => {
    const closed = { done: false }
    const api = defineServe({
      queries: {
        rows: {
          query: async function*() {
            try {
              for (let i = 0; i < count; i++) yield { i }
            } finally {
              closed.done = true
            }
          }
        }
      },
      mcp: true
    })
    return { api, closed }
  }
  const callRows = (handler: Parameters<typeof mcpPost>[0]) => mcpPost(handler, rpc("tools/call", { name: "rows", arguments: {} }))

  it("a streamed answer of at most 1,000 rows is given whole", async () => {
    const { api } = streamingApi(3)
    const { json } = await callRows(api.handler)
    const result = (json as { result: { content: Array<{ text: string }> } }).result
    expect(JSON.parse(result.content[0]!.text)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }])
    expect(result.content).toHaveLength(1)
  })

  it("a longer one gives its first 1,000 rows, says so, and stops the stream", async () => {
    const { api, closed } = streamingApi(5_000)
    const { json } = await callRows(api.handler)
    const result = (json as { result: { isError?: boolean; content: Array<{ text: string }> } }).result
    expect(result.isError).toBeUndefined()
    const rows = JSON.parse(result.content[0]!.text) as Array<{ i: number }>
    expect(rows).toHaveLength(1_000)
    expect(rows.at(-1)).toEqual({ i: 999 })
    expect(result.content[1]!.text).toMatch(/Only the first 1000 rows are given here/)
    expect(closed.done).toBe(true)
  })
})
