/**
 * Run by lazyLoad.test.ts in its own process (with recordImports.mjs): prints how many modules of the
 * MCP SDK were loaded after each step, one `<step> <count>` line per step.
 */
import { existsSync, readFileSync } from "node:fs"
import { defineServe } from "queryserve"

const loaded = (): number => {
  const file = process.env["RECORD_IMPORTS"]!
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line.length > 0).length : 0
}

const ping = { query: () => "pong" }
const plain = defineServe({ queries: { ping } })
await plain.handler({ method: "GET", path: "/api/analytics/ping" })
console.log(`without-mcp ${loaded()}`)

const agents = defineServe({ mcp: true, queries: { ping } })
await agents.handler({ method: "GET", path: "/api/analytics/ping" })
console.log(`mcp-defined ${loaded()}`)

const answer = await agents.handler({
  method: "POST",
  path: "/api/analytics/mcp",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
})
console.log(`mcp-served ${loaded()} ${answer.status}`)
