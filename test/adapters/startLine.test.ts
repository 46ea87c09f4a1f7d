/**
 * What `api.start()` says: one line on stdout with the URL and the docs URL (none with `quiet`), and,
 * for a port already taken, a one-line Error that names the port and how to choose another.
 */
import { createServer } from "node:net"
import { afterEach, describe, expect, it, vi } from "vitest"
import { defineServe, type RunningServer } from "queryserve"

const api = () => defineServe({ queries: { ping: { query: () => ({ ok: true }) } } })
const running: Array<RunningServer> = []

afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(running.splice(0).map((server) => server.stop()))
})

const printedBy = async (start: () => Promise<RunningServer>): Promise<ReadonlyArray<string>> => {
  const printed: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void printed.push(args.join(" ")))
  running.push(await start())
  vi.restoreAllMocks()
  return printed
}

describe("api.start()", () => {
  it("prints one line: the URL and the docs URL", async () => {
    const printed = await printedBy(() => api().start({ port: 0, hostname: "127.0.0.1", handleSignals: false }))
    const url = running[0]!.url
    expect(printed).toEqual([`queryserve listening on ${url}, docs at ${url}/api/analytics/docs`])
    expect((await fetch(`${url}/api/analytics/docs`)).status).toBe(200)
  })

  it("names the OpenAPI document when the docs page is off, and follows basePath", async () => {
    const printed = await printedBy(() =>
      defineServe({ basePath: "/v1", docs: { enabled: false }, queries: { ping: { query: () => 1 } } })
        .start({ port: 0, hostname: "127.0.0.1", handleSignals: false }))
    expect(printed).toEqual([`queryserve listening on ${running[0]!.url}, OpenAPI document at ${running[0]!.url}/v1/openapi.json`])
  })

  it("prints nothing with quiet: true", async () => {
    expect(await printedBy(() => api().start({ port: 0, hostname: "127.0.0.1", handleSignals: false, quiet: true }))).toEqual([])
  })

  it("rejects a port in use with a one-line Error naming the port and saying to pass another", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const error = await api().start({ port, hostname: "127.0.0.1", handleSignals: false }).then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toBe(`Port ${port} is already in use on 127.0.0.1: pass another \`port\` to start() (0 picks a free one)`)
      expect((error as Error).message).not.toContain("\n")
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})
