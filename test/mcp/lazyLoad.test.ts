import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const support = (name: string) => fileURLToPath(new URL(`./support/${name}`, import.meta.url))

it("loads the MCP SDK only once an MCP request arrives, never for an API without mcp", async () => {
  const dir = mkdtempSync(join(tmpdir(), "queryserve-mcp-imports-"))
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", support("recordImports.mjs"), support("lazyLoadProbe.ts")],
      { cwd: ROOT, env: { ...process.env, RECORD_IMPORTS: join(dir, "imports.txt") }, timeout: 60_000 }
    )
    const counts = Object.fromEntries(stdout.trim().split("\n").map((line) => line.split(" ")))
    expect(counts["without-mcp"]).toBe("0")
    expect(counts["mcp-defined"]).toBe("0")
    expect(Number(counts["mcp-served"])).toBeGreaterThan(0)
    expect(stdout).toMatch(/mcp-served \d+ 200/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
