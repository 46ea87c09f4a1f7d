/** `npm start` on a port that is taken: it says to set PORT, at once, before building any data. */
import { execFile } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

it("exits 1 saying to set PORT, before the dataset is built", async () => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
  const port = (taken.address() as { port: number }).port
  try {
    const ended = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ["--import", "tsx", "examples/analytics/main.ts"], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DEMO_ROWS: "60000" }
      }, (error, stdout, stderr) => resolve({ code: child.exitCode ?? (error as { code?: number } | null)?.code ?? null, stdout, stderr }))
    })
    expect(ended.code).toBe(1)
    expect(ended.stderr.trim()).toBe(`[demo] port ${port} is already in use on 127.0.0.1: set PORT to another one, e.g. PORT=${port + 1} npm start`)
    expect(ended.stdout).not.toContain("[demo] orders")
  } finally {
    await new Promise((resolve) => taken.close(resolve))
  }
})
