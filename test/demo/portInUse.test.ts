/**
 * The demos on a port that is taken: `npm start`, and the Postgres and ClickHouse examples, say to
 * set PORT at once, before building or loading any data (nor connecting to their database).
 */
import { execFile } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** Nothing listens there: a demo that connected before checking its port would fail otherwise. */
const UNUSED_DATABASE = { DATABASE_URL: "postgres://127.0.0.1:9/none", CLICKHOUSE_URL: "http://127.0.0.1:9" }

const DEMOS = [
  ["npm start", "examples/analytics/main.ts"],
  ["the Postgres example", "examples/postgres/main.ts"],
  ["the ClickHouse example", "examples/clickhouse/main.ts"]
] as const

for (const [name, script] of DEMOS) {
  it(`${name} exits 1 saying to set PORT, before the dataset is built`, async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const ended = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(process.execPath, ["--import", "tsx", script], {
          cwd: ROOT,
          env: { ...process.env, ...UNUSED_DATABASE, PORT: String(port), HOST: "127.0.0.1", DEMO_ROWS: "60000" }
        }, (error, stdout, stderr) => resolve({ code: child.exitCode ?? (error as { code?: number } | null)?.code ?? null, stdout, stderr }))
      })
      expect(ended.code).toBe(1)
      expect(ended.stderr.trim()).toBe(`[demo] port ${port} is already in use on 127.0.0.1: set PORT to another one, e.g. PORT=${port + 1} npm start`)
      expect(ended.stdout).not.toContain("[demo] orders")
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
}
