/**
 * Checks of the demo's streamed export shared by the engines: a full year of one tenant's orders
 * read as CSV over HTTP, compared with that engine's own count, and the export left mid-stream.
 */
import { expect, it } from "vitest"
import { TENANT_IDS } from "../../../examples/analytics/dataset.js"
import * as metrics from "../../../examples/analytics/metrics.js"
import { type Db, raw, type SqlDriver } from "../../../examples/analytics/sql.js"
import { TENANT_KEYS } from "./crossCheck.js"

export const FULL_YEAR = { from: "2025-01-01", to: "2025-12-31" } as const

/** What auto-inject does to the context's db: every table read is the tenant's. */
export const scopedTo = (db: Db, tenant: string): Db => ({ ...db, table: (name) => db.table(name).where("tenant_id", "eq", tenant) })

export interface OrderTally {
  readonly orders: number
  /** The sum of their order ids: the same count of other orders would not match it. */
  readonly idSum: number
}

/** The engine's own count of a tenant's orders in FULL_YEAR. */
export const countOrders = async (db: Db, tenant: string): Promise<OrderTally> => {
  const [row] = await scopedTo(db, tenant)
    .table("orders")
    .where("day", "gte", FULL_YEAR.from)
    .where("day", "lte", FULL_YEAR.to)
    .select(raw("count(*) AS orders"), raw("sum(order_id) AS id_sum"))
    .execute<{ orders: number; id_sum: number }>()
  return { orders: Number(row!.orders), idSum: Number(row!.id_sum) }
}

/** Reads a CSV export as it arrives: its data lines counted, their order ids summed and seen to ascend. */
export const tallyCsv = async (response: Response): Promise<OrderTally & { readonly ascending: boolean; readonly header: string }> => {
  const decoder = new TextDecoder()
  let header: string | undefined
  let rest = ""
  let orders = 0
  let idSum = 0
  let last = -Infinity
  let ascending = true
  // CSV lines end with CRLF.
  const line = (crlf: string): void => {
    const text = crlf.endsWith("\r") ? crlf.slice(0, -1) : crlf
    if (header === undefined) {
      header = text
      return
    }
    const id = Number(text.slice(0, text.indexOf(",")))
    ascending &&= id > last
    last = id
    orders += 1
    idSum += id
  }
  const reader = response.body!.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const lines = (rest + decoder.decode(read.value, { stream: true })).split("\n")
    rest = lines.pop()!
    lines.forEach(line)
  }
  if (rest !== "") line(rest)
  return { orders, idSum, ascending, header: header ?? "" }
}

/** `curl … ordersExport.csv?from=2025-01-01&to=2025-12-31` as each tenant: every order of the year, each once, oldest first. */
export const itExportsAFullYear = (engine: () => { readonly baseUrl: string; readonly db: Db }): void => {
  it("streams a full year's export as CSV: as many rows as the engine counts for the tenant, each order once, oldest first", async () => {
    const { baseUrl, db } = engine()
    for (const [tenant, key] of Object.entries(TENANT_KEYS)) {
      const response = await fetch(`${baseUrl}/ordersExport.csv?${new URLSearchParams(FULL_YEAR)}`, { headers: { "x-api-key": key } })
      expect(response.status).toBe(200)
      const tally = await tallyCsv(response)
      expect(tally.header).toBe("order_id,day,region,product,quantity,amount")
      expect(tally.ascending).toBe(true)
      expect({ orders: tally.orders, idSum: tally.idSum }, tenant).toEqual(await countOrders(db, tenant))
    }
  })
}

/**
 * `ordersPage` walked to its end for a week, `limit` rows a page, by its cursors: the same rows as the
 * week's export, each once; a `Link` header names the next page exactly when there is one.
 */
export const itPagesLikeTheExport = (baseUrl: () => string, limit: number): void => {
  it("ordersPage walks the export's rows a page at a time, each once, following nextCursor and the Link header", async () => {
    const week = { from: "2025-03-01", to: "2025-03-07" }
    const get = (path: string) => fetch(`${baseUrl()}/${path}`, { headers: { "x-api-key": TENANT_KEYS.globex } })
    const exported = await (await get(`ordersExport?${new URLSearchParams(week)}`)).json() as Array<unknown>
    expect(exported.length).toBeGreaterThan(2 * limit)
    const walked: Array<unknown> = []
    const pageOf = (cursor?: string) => `ordersPage?${new URLSearchParams({ ...week, limit: String(limit), ...(cursor === undefined ? {} : { cursor }) })}`
    for (let path: string | undefined = pageOf(); path !== undefined;) {
      const response = await get(path)
      expect(response.status).toBe(200)
      const { data, page } = await response.json() as { data: Array<unknown>; page: { nextCursor: string | null; hasMore: boolean } }
      walked.push(...data)
      const link = response.headers.get("link")
      expect(link !== null).toBe(page.hasMore)
      if (page.nextCursor !== null) expect(link).toContain(`cursor=${encodeURIComponent(page.nextCursor)}`)
      path = page.nextCursor === null ? undefined : pageOf(page.nextCursor)
    }
    expect(walked).toEqual(exported)
  })
}

/** One tenant's full-year export taken in-process: a first row read, as a server has before its client leaves. */
export const startedExport = async (db: Db, signal?: AbortSignal) => {
  const rows = metrics.ordersExport(scopedTo(db, TENANT_IDS[0]!), FULL_YEAR, signal)
  expect((await rows.next()).done).toBe(false)
  return rows
}

export interface StreamEnd {
  readonly batches: number
  /** Ran out, rather than ended early or failed. */
  readonly complete: boolean
  /** performance.now() when its `finally` had run. */
  readonly at: number
}

/** `driver`, with each stream's end recorded in `ends`. */
export const observedStreams = (driver: SqlDriver): { readonly driver: SqlDriver; readonly ends: Array<StreamEnd> } => {
  const ends: Array<StreamEnd> = []
  return {
    ends,
    driver: {
      ...driver,
      execute: (statement, signal) => driver.execute(statement, signal),
      stream: async function* (statement, signal) {
        let batches = 0
        let complete = false
        try {
          for await (const batch of driver.stream(statement, signal)) {
            batches += 1
            yield batch
          }
          complete = true
        } finally {
          ends.push({ batches, complete, at: performance.now() })
        }
      }
    }
  }
}
