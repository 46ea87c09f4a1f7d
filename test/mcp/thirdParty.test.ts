/**
 * The demo's MCP endpoint as clients that are not ours meet it: the MCP Inspector's CLI lists and
 * calls its tools, and the MCP conformance suite runs its server scenarios against it. Both are
 * test-only packages that `npm run test:binaries` installs; without them these tests skip.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, request as httpRequest, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DemoProcess, startDemo } from "../demo/support/demoProcess.js"
import { callApi } from "../demo/support/http.js"
import { findTestBinary } from "../support/testBinaries.js"

const run = promisify(execFile)

/** Runs a program to its end, whatever its exit code, for a failure message that shows what it printed. */
const runToEnd = (file: string, args: ReadonlyArray<string>): Promise<{ readonly code: number; readonly stdout: string }> =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout: `${stdout}${stderr}` })
    })
  })
const ACME_KEY = "demo-acme-key"
const TENANT_TOOLS = [
  "revenueByDay",
  "revenueByRegion",
  "orderValuePercentiles",
  "topProducts",
  "activeCustomers",
  "cohortRetention",
  "funnel",
  "ordersExport",
  "ordersPage",
  "tenantSummary",
  "list_datasets",
  "describe_dataset",
  "query_dataset"
]

const inspector = findTestBinary("The MCP Inspector CLI", "@modelcontextprotocol/inspector-cli/build/cli.js")
const conformance = findTestBinary("The MCP conformance suite", "@modelcontextprotocol/conformance/dist/index.js")
// The suite needs a newer Node than 20 (fs.globSync); Bun runs it.
const bun = conformance === undefined ? undefined : findTestBinary("Bun", "@oven/bun-linux-x64/bin/bun")

let demo: DemoProcess

beforeAll(async () => {
  if (inspector !== undefined || conformance !== undefined) demo = await startDemo(2_000)
}, 90_000)

afterAll(async () => {
  await demo?.stop("SIGKILL")
})

describe.skipIf(inspector === undefined)("the MCP Inspector CLI", () => {
  const inspect = async (...args: ReadonlyArray<string>): Promise<unknown> => {
    // Its CLI finds its own package.json relative to the working directory: run it from its own folder.
    const { stdout } = await run(
      process.execPath,
      [inspector!, "--cli", `${demo.baseUrl}/mcp`, "--transport", "http", "--header", `x-api-key: ${ACME_KEY}`, ...args],
      { cwd: dirname(inspector!), timeout: 60_000 }
    )
    return JSON.parse(stdout)
  }

  it("lists the demo's tools for a tenant's key, and calls one with the answer plain HTTP gives", async () => {
    const listed = (await inspect("--method", "tools/list")) as { tools: Array<{ name: string; inputSchema: object }> }
    // The admin-only tool is not offered to a tenant's key.
    expect(listed.tools.map((tool) => tool.name)).toEqual(TENANT_TOOLS)
    const range = { from: "2025-01-01", to: "2025-03-31" }
    const called = await inspect("--method", "tools/call", "--tool-name", "revenueByRegion", "--tool-arg", `from=${range.from}`, "--tool-arg", `to=${range.to}`)
    const overHttp = await callApi(demo.baseUrl, "revenueByRegion", { key: ACME_KEY, input: range })
    expect(overHttp.status).toBe(200)
    expect(called).toEqual({ content: [{ type: "text", text: overHttp.text }], structuredContent: { result: overHttp.json } })
  }, 120_000)
})

/** A loopback proxy to the demo's MCP endpoint that adds a tenant's key: the suite cannot send headers of its own. */
const keyProxy = (target: URL): Promise<Server> =>
  new Promise((resolve) => {
    const proxy = createServer((incoming, outgoing) => {
      const forwarded = httpRequest(
        { host: target.hostname, port: target.port, path: target.pathname, method: incoming.method, headers: { ...incoming.headers, "x-api-key": ACME_KEY } },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(outgoing)
        }
      )
      forwarded.on("error", () => outgoing.destroy())
      incoming.pipe(forwarded)
    })
    proxy.listen(0, "127.0.0.1", () => resolve(proxy))
  })

describe.skipIf(conformance === undefined || bun === undefined)("the MCP conformance suite", () => {
  it("passes its server scenarios, apart from those for features the demo does not offer", async () => {
    const proxy = await keyProxy(new URL(`${demo.baseUrl}/mcp`))
    const output = mkdtempSync(join(tmpdir(), "queryserve-conformance-"))
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`
      const baseline = fileURLToPath(new URL("./conformance-baseline.yml", import.meta.url))
      // Exit 0 means: every scenario outside the baseline passed, and every one in it still fails.
      const { code, stdout } = await runToEnd(bun!, [conformance!, "server", "--url", url, "--expected-failures", baseline, "-o", output])
      expect(code, stdout).toBe(0)
      const statuses = readdirSync(output).flatMap((dir) =>
        (JSON.parse(readFileSync(join(output, dir, "checks.json"), "utf8")) as Array<{ id: string; status: string }>).map(
          (check) => `${check.id}: ${check.status}`
        )
      )
      console.log(`[conformance] ${stdout.match(/Total: .*/)?.[0] ?? ""}\n  ${statuses.filter((s) => !s.endsWith("FAILURE")).join("\n  ")}`)
      for (const scenario of ["server-initialize", "ping", "tools-list", "localhost-host-rebinding-rejected", "localhost-host-valid-accepted"]) {
        expect(statuses).toContain(`${scenario}: SUCCESS`)
      }
    } finally {
      proxy.close()
      rmSync(output, { recursive: true, force: true })
    }
  }, 180_000)
})
