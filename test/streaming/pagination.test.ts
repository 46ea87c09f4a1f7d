import { defineServe, initServe, type RunningServer } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

const ROWS = Array.from({ length: 250 }, (_, id) => ({ id, region: id % 2 === 0 ? "eu" : "us" }))

const { query: procedure } = initServe({})

describe("paginated endpoints over a real server", () => {
  const api = defineServe({
    queries: {
      orders: procedure
        .input(z.object({ region: z.enum(["eu", "us"]).optional() }))
        .paginate({ defaultLimit: 40, maxLimit: 100 })
        .query(({ input, ctx }) => {
          const matching = ROWS.filter((row) => input.region === undefined || row.region === input.region)
          return matching.slice(ctx.page.offset, ctx.page.offset + ctx.page.limit + 1)
        }),
      generated: {
        paginate: { defaultLimit: 7 },
        query: async function*({ ctx }: { ctx: { page?: { offset: number } } }) {
          for (let id = ctx.page!.offset; id < 20; id++) yield { id }
        }
      },
      search: {
        method: "POST",
        paginate: {},
        query: ({ ctx }: { ctx: { page?: { limit: number; offset: number } } }) => ROWS.slice(ctx.page!.offset, ctx.page!.offset + ctx.page!.limit + 1)
      }
    }
  })
  let server: RunningServer
  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  })
  afterAll(() => server.stop())
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}/api/analytics/${path}`, { headers })

  const walk = async (first: string, limitOf: (page: number) => number | undefined = () => undefined) => {
    const seen: Array<number> = []
    let query: string | undefined = first
    let pages = 0
    while (query !== undefined) {
      const limit = limitOf(pages)
      const response = await get(`${query}${limit === undefined ? "" : `&limit=${limit}`}`)
      expect(response.status).toBe(200)
      const body = (await response.json()) as { data: Array<{ id: number }>; page: { limit: number; nextCursor: string | null; hasMore: boolean } }
      seen.push(...body.data.map((row) => row.id))
      expect(body.page.hasMore).toBe(body.page.nextCursor !== null)
      const link = response.headers.get("link")
      if (body.page.nextCursor === null) {
        expect(link).toBeNull()
        query = undefined
      } else {
        expect(link).toMatch(/^<\/api\/analytics\/orders\?.*cursor=.*>; rel="next"$/)
        query = `orders?region=eu&cursor=${encodeURIComponent(body.page.nextCursor)}`
      }
      pages++
    }
    return { seen, pages }
  }

  it("walks every row exactly once, with the default limit, and with a limit changed between pages", async () => {
    const expected = ROWS.filter((row) => row.region === "eu").map((row) => row.id)
    const byDefault = await walk("orders?region=eu")
    expect(byDefault.seen).toEqual(expected)
    expect(byDefault.pages).toBe(Math.ceil(expected.length / 40))
    const changing = await walk("orders?region=eu", (page) => [3, 50, 100, 7][page % 4])
    expect(changing.seen).toEqual(expected)
  })

  it("answers { data, page } with the page's limit", async () => {
    const response = await get("orders?limit=5")
    const body = await response.json()
    expect(body.data).toEqual(ROWS.slice(0, 5))
    expect(body.page).toMatchObject({ limit: 5, hasMore: true })
    expect(typeof body.page.nextCursor).toBe("string")
  })

  it("follows the Link header to the next page", async () => {
    const first = await get("orders?limit=100")
    const link = /^<([^>]+)>/.exec(first.headers.get("link")!)![1]!
    const second = await fetch(new URL(link, server.url))
    const body = await second.json()
    expect(body.data[0]).toEqual(ROWS[100])
    expect(body.data).toHaveLength(100)
  })

  it("refuses a limit above maxLimit, or not a whole number ≥ 1, naming [\"limit\"]", async () => {
    for (const limit of ["101", "0", "-1", "2.5", "many"]) {
      const response = await get(`orders?limit=${limit}`)
      expect(response.status).toBe(400)
      const body = await response.json()
      expect(body.error.type).toBe("VALIDATION_ERROR")
      expect(body.error.details.issues[0].path).toEqual(["limit"])
    }
  })

  it("refuses an altered cursor, and a cursor used with other inputs, naming [\"cursor\"]", async () => {
    const first = await (await get("orders?region=eu&limit=10")).json()
    const cursor: string = first.page.nextCursor
    const altered = cursor.replace(/^[0-9a-z]+/, (offset) => (parseInt(offset, 36) + 1).toString(36))
    for (const query of [`region=eu&cursor=${altered}`, `region=us&cursor=${cursor}`, `cursor=${cursor}`, "cursor=nonsense"]) {
      const response = await get(`orders?${query}`)
      expect(response.status).toBe(400)
      const body = await response.json()
      expect(body.error.type).toBe("VALIDATION_ERROR")
      expect(body.error.details.issues[0].path).toEqual(["cursor"])
    }
    // The same cursor with the same inputs and another limit is fine.
    expect((await get(`orders?region=eu&limit=3&cursor=${cursor}`)).status).toBe(200)
  })

  it("gives the rows of data alone as CSV and NDJSON", async () => {
    const csv = await get("orders.csv?limit=2")
    expect(await csv.text()).toBe("id,region\r\n0,eu\r\n1,us\r\n")
    expect(csv.headers.get("link")).toMatch(/cursor=/)
    const ndjson = await get("orders.ndjson?limit=2")
    expect(await ndjson.text()).toBe('{"id":0,"region":"eu"}\n{"id":1,"region":"us"}\n')
  })

  it("reads limit + 1 rows of a generator for a page, and pages on", async () => {
    const first = await (await get("generated")).json()
    expect(first.data.map((row: { id: number }) => row.id)).toEqual([0, 1, 2, 3, 4, 5, 6])
    const last = await (await get(`generated?limit=20&cursor=${first.page.nextCursor}`)).json()
    expect(last.data.map((row: { id: number }) => row.id)).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    expect(last.page).toEqual({ limit: 20, nextCursor: null, hasMore: false })
  })

  it("takes limit and cursor from a POST body, without a Link", async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/api/analytics/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const first = await post({ limit: 200 })
    const body = await first.json()
    expect(body.data).toHaveLength(200)
    expect(first.headers.get("link")).toBeNull()
    const second = await (await post({ limit: 200, cursor: body.page.nextCursor })).json()
    expect(second.data).toEqual(ROWS.slice(200))
    expect((await post({ limit: 1001 })).status).toBe(400)
  })

  it("describes the paged input and the wrapped output in OpenAPI", async () => {
    const document = await (await get("openapi.json")).json()
    const operation = document.paths["/api/analytics/orders"].get
    const names = operation.parameters.map((parameter: { name: string }) => parameter.name)
    expect(names).toEqual(expect.arrayContaining(["region", "limit", "cursor"]))
    const schema = operation.responses["200"].content["application/json"].schema
    const resolved = schema.$ref === undefined ? schema : document.components.schemas[schema.$ref.split("/").pop()]
    expect(resolved.required).toEqual(["data", "page"])
    expect(resolved.properties.page.properties.nextCursor.type).toEqual(["string", "null"])
  })
})
