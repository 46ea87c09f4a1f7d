/**
 * Streamed answers under load: a million-row CSV export and eight concurrent 300,000-row exports
 * through the Node server keep live memory bounded, and every row arrives.
 */
import { defineServe, type RunningServer } from "queryserve"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const PAD = "x".repeat(60)

const live = () => {
  gc()
  return process.memoryUsage()
}

/** Reads a body to its end, counting its lines without keeping it. */
const countLines = async (response: Response): Promise<number> => {
  const reader = response.body!.getReader()
  let lines = 0
  for (let next = await reader.read(); next.done !== true; next = await reader.read()) {
    for (let i = 0; i < next.value.length; i++) if (next.value[i] === 10) lines++
  }
  return lines
}

describe("streamed exports under load", () => {
  const api = defineServe({
    queries: {
      rows: {
        query: async function*({ input }: { input: { count?: string } }) {
          const count = Number(input.count ?? 300_000)
          for (let id = 0; id < count; id++) yield { id, name: `row-${id}`, amount: id * 0.5, pad: PAD }
        }
      }
    }
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(async () => {
    await server.stop()
    await api.dispose()
  })

  const measure = async (run: () => Promise<void>) => {
    const before = live()
    let heapPeak = before.heapUsed
    let rssPeak = before.rss
    const sampler = setInterval(() => {
      const now = live()
      heapPeak = Math.max(heapPeak, now.heapUsed)
      rssPeak = Math.max(rssPeak, now.rss)
    }, 250)
    const started = performance.now()
    await run()
    clearInterval(sampler)
    const report = {
      seconds: (performance.now() - started) / 1000,
      heapGrowthMiB: (heapPeak - before.heapUsed) / 2 ** 20,
      rssGrowthMiB: (rssPeak - before.rss) / 2 ** 20
    }
    console.log("[streaming]", JSON.stringify(report))
    return report
  }

  it("exports a million rows as CSV with live heap growth under 64 MiB", async () => {
    let lines = 0
    const report = await measure(async () => {
      lines = await countLines(await fetch(`${server.url}/api/analytics/rows.csv?count=1000000`))
    })
    expect(lines).toBe(1_000_001)
    expect(report.heapGrowthMiB).toBeLessThan(64)
  })

  it("serves eight concurrent 300,000-row exports with live heap growth under 64 MiB", async () => {
    let counts: Array<number> = []
    const report = await measure(async () => {
      counts = await Promise.all(
        Array.from({ length: 8 }, () => fetch(`${server.url}/api/analytics/rows.ndjson`).then(countLines))
      )
    })
    expect(counts).toEqual(Array(8).fill(300_000))
    expect(report.heapGrowthMiB).toBeLessThan(64)
  })
})
