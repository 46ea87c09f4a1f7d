// @vitest-environment jsdom
/**
 * The React hooks in jsdom, React 19 and TanStack Query v5, against a real queryserve server on
 * loopback: answers and their cache keys, the 401 envelope as a ServeClientError, retries only for what
 * may pass later, the request aborted (the handler's ctx.signal) when the component unmounts, pages
 * walked by cursor, and a dataset query's POST.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { cleanup, configure, renderHook, waitFor } from "@testing-library/react"
import { Schema } from "effect"
import { apiKeyAuth, defineServe, initServe, type RunningServer, ServeClientError } from "queryserve"
import { createElement, type ReactNode } from "react"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { createHooks, datasetKeyOf, pagesKeyOf, queryKeyOf } from "../../src/react/index.js"
import { freePort } from "../support/freePort.js"
import { recordingFetch } from "../support/recordingFetch.js"
import { settledWithin } from "../support/settledWithin.js"

// waitFor's default of 1 s is short for a busy machine: the wait ends as soon as the expectation holds.
configure({ asyncUtilTimeout: 10_000 })

const { query } = initServe({})

const ORDERS: Record<string, ReadonlyArray<{ readonly id: number; readonly region: string; readonly amount: number }>> = {
  acme: [
    { id: 1, region: "eu", amount: 10 },
    { id: 2, region: "us", amount: 20 },
    { id: 3, region: "eu", amount: 30 },
    { id: 4, region: "eu", amount: 40 },
    { id: 5, region: "us", amount: 50 }
  ],
  globex: [{ id: 9, region: "eu", amount: 99 }]
}

const ordersOf = (tenant: unknown) => ORDERS[String(tenant)] ?? []

/** Resolved by the `held` handler once it runs, and once its ctx.signal aborts. */
let heldStarted: () => void = () => {}
let heldAborted: () => void = () => {}

/** The offsets the `orderPages` handler was asked for, in order. */
const offsetsSeen: Array<number> = []

const queries = {
  regionTotal: query
    .input(Schema.Struct({ region: Schema.String }))
    .query(({ input, ctx }) => ({
      region: input.region,
      total: ordersOf(ctx.auth?.tenantId).filter((order) => order.region === input.region).reduce((sum, order) => sum + order.amount, 0)
    })),
  // A POST query: the hooks learn its method from the OpenAPI document.
  search: query
    .method("POST")
    .input(Schema.Struct({ ids: Schema.Array(Schema.Number) }))
    .query(({ input, ctx }) => ordersOf(ctx.auth?.tenantId).filter((order) => input.ids.includes(order.id))),
  held: query.query(({ ctx }) =>
    new Promise<string>((_, reject) => {
      ctx.signal.addEventListener("abort", () => {
        heldAborted()
        reject(ctx.signal.reason)
      }, { once: true })
      heldStarted()
    })
  ),
  orderPages: query
    .input(Schema.Struct({ region: Schema.optional(Schema.String) }))
    .paginate({ defaultLimit: 2, maxLimit: 10 })
    .query(({ input, ctx }) => {
      offsetsSeen.push(ctx.page.offset)
      const rows = ordersOf(ctx.auth?.tenantId).filter((order) => input.region === undefined || order.region === input.region)
      return rows.slice(ctx.page.offset, ctx.page.offset + ctx.page.limit + 1)
    })
}

const api = defineServe({
  auth: apiKeyAuth({ keys: { "k-acme": { tenantId: "acme" }, "k-globex": { tenantId: "globex" } } }),
  queries
})

/** A QueryClient (default: a fresh one) and a wrapper providing it, as an application's root would. */
const provided = (queryClient = new QueryClient()) => {
  const wrapper = ({ children }: { readonly children: ReactNode }) => createElement(QueryClientProvider, { client: queryClient }, children)
  return { queryClient, wrapper }
}

describe("createHooks against a queryserve server on loopback", () => {
  let server: RunningServer
  let baseUrl: string

  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    baseUrl = `${server.url}/api/analytics`
  })
  afterAll(async () => {
    await server?.stop()
    await api.dispose()
  })
  afterEach(cleanup)

  it("useQuery answers with the query's output, cached under [key, input], for the key's tenant", async () => {
    const { queryClient, wrapper } = provided()
    const acme = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" }, methods: { regionTotal: "GET" } })
    const { result } = renderHook(() => acme.useQuery("regionTotal", { region: "eu" }), { wrapper })
    await waitFor(() => expect(result.current.isSuccess).toBe(true))
    expect(result.current.data).toEqual({ region: "eu", total: 80 })
    expect(queryClient.getQueryData(queryKeyOf("regionTotal", { region: "eu" }))).toEqual({ region: "eu", total: 80 })

    const globex = createHooks<typeof api>({ baseUrl, headers: () => ({ "x-api-key": "k-globex" }), methods: { regionTotal: "GET" } })
    const other = provided()
    const { result: globexResult } = renderHook(() => globex.useQuery("regionTotal", { region: "eu" }), { wrapper: other.wrapper })
    await waitFor(() => expect(globexResult.current.data).toEqual({ region: "eu", total: 99 }))
  })

  it("useQuery learns a POST query's method from the OpenAPI document once and sends its input as JSON", async () => {
    const { wrapper } = provided()
    const recording = recordingFetch()
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" }, fetch: recording.fetchImpl })
    const { result } = renderHook(() => [hooks.useQuery("search", { ids: [2, 5] }), hooks.useQuery("regionTotal", { region: "us" })] as const, { wrapper })
    await waitFor(() => expect(result.current.every((answer) => answer.isSuccess)).toBe(true))
    expect(result.current[0].data).toEqual([{ id: 2, region: "us", amount: 20 }, { id: 5, region: "us", amount: 50 }])
    expect(result.current[1].data).toEqual({ region: "us", total: 70 })
    expect([...recording.seen].sort()).toEqual(["GET /api/analytics/openapi.json", "GET /api/analytics/regionTotal", "POST /api/analytics/search"])
  })

  it("fails with the ServeClientError exported by queryserve, carrying the 401 envelope, without retrying", async () => {
    const { wrapper } = provided()
    const recording = recordingFetch()
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-wrong" }, fetch: recording.fetchImpl, methods: { regionTotal: "GET" } })
    const { result } = renderHook(() => hooks.useQuery("regionTotal", { region: "eu" }), { wrapper })
    await waitFor(() => expect(result.current.isError).toBe(true))
    const error = result.current.error
    expect(error).toBeInstanceOf(ServeClientError)
    expect(error).toMatchObject({
      status: 401,
      message: "The API key in the x-api-key header is not valid",
      envelope: { error: { type: "UNAUTHORIZED", message: "The API key in the x-api-key header is not valid" } }
    })
    expect(result.current.failureCount).toBe(1)
    expect(recording.seen).toEqual(["GET /api/analytics/regionTotal"])
  })

  it("retries a server that does not answer, then fails with a ServeClientError of status 0", async () => {
    const { wrapper } = provided()
    const down = `http://127.0.0.1:${await freePort()}/api/analytics`
    const hooks = createHooks<typeof api>({ baseUrl: down, methods: { regionTotal: "GET" } })
    const { result } = renderHook(() => hooks.useQuery("regionTotal", { region: "eu" }, { retryDelay: 10 }), { wrapper })
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.error).toBeInstanceOf(ServeClientError)
    expect(result.current.error).toMatchObject({ status: 0, envelope: undefined, message: expect.stringMatching(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/analytics\/regionTotal got no response: /) })
    expect(result.current.failureCount).toBe(4)
  })

  it("takes the hook's retry, else the QueryClient's default, over its own policy", async () => {
    const down = `http://127.0.0.1:${await freePort()}/api/analytics`
    const hooks = createHooks<typeof api>({ baseUrl: down, methods: { regionTotal: "GET" } })
    const { wrapper } = provided(new QueryClient({ defaultOptions: { queries: { retry: 1, retryDelay: 10 } } }))
    const { result } = renderHook(() => [
      hooks.useQuery("regionTotal", { region: "eu" }),
      hooks.useQuery("regionTotal", { region: "us" }, { retry: false })
    ] as const, { wrapper })
    await waitFor(() => expect(result.current.every((answer) => answer.isError)).toBe(true))
    expect(result.current.map((answer) => answer.failureCount)).toEqual([2, 1])
  })

  it("aborts the request when the component using it unmounts: the handler's ctx.signal aborts", async () => {
    const { queryClient, wrapper } = provided()
    const started = new Promise<void>((resolve) => (heldStarted = resolve))
    const aborted = new Promise<void>((resolve) => (heldAborted = resolve))
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" }, methods: { held: "GET" } })
    const { result, unmount } = renderHook(() => hooks.useQuery("held"), { wrapper })
    await started
    expect(result.current.fetchStatus).toBe("fetching")
    unmount()
    expect(await settledWithin(aborted, 5_000)).toEqual({ value: undefined })
    // Cancelled before any answer, the query goes back to where it was: pending, with no error.
    expect(queryClient.getQueryState(queryKeyOf("held", undefined))).toMatchObject({ status: "pending", fetchStatus: "idle", error: null })
  })

  it("useInfiniteQuery walks the pages by nextCursor, cached under [key, input, \"pages\"]", async () => {
    const { queryClient, wrapper } = provided()
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" }, methods: { orderPages: "GET" } })
    offsetsSeen.length = 0
    const { result } = renderHook(() => hooks.useInfiniteQuery("orderPages", { limit: 2 }), { wrapper })
    await waitFor(() => expect(result.current.isSuccess).toBe(true))
    while (result.current.hasNextPage) {
      const before = result.current.data?.pages.length
      await result.current.fetchNextPage()
      await waitFor(() => expect(result.current.data?.pages.length).toBe((before ?? 0) + 1))
    }
    const pages = result.current.data!.pages
    expect(pages.map((page) => page.data.map((order) => order.id))).toEqual([[1, 2], [3, 4], [5]])
    expect(pages.map((page) => [page.page.limit, page.page.hasMore])).toEqual([[2, true], [2, true], [2, false]])
    expect(pages[2]!.page.nextCursor).toBeNull()
    // Each next page is asked with the cursor the page before gave: opaque, bound to the input.
    expect(result.current.data!.pageParams).toEqual([undefined, pages[0]!.page.nextCursor, pages[1]!.page.nextCursor])
    expect(offsetsSeen).toEqual([0, 2, 4])
    expect(queryClient.getQueryData(pagesKeyOf("orderPages", { limit: 2 }))).toBe(result.current.data)
  })

  it("useInfiniteQuery on a query that answers no page fails with a TypeError saying so, not retried", async () => {
    const { wrapper } = provided()
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" }, methods: { regionTotal: "GET" } })
    const { result } = renderHook(() => hooks.useInfiniteQuery("regionTotal" as never, { region: "eu" } as never), { wrapper })
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.error).toBeInstanceOf(TypeError)
    expect(result.current.error?.message).toBe("useInfiniteQuery: \"regionTotal\" answered without a page ({ data, page }): it is not paginated")
    expect(result.current.failureCount).toBe(1)
  })
})

interface SeenRequest {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly contentType: string | undefined
  readonly apiKey: string | string[] | undefined
  readonly body: unknown
}

const bodyOf = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString("utf8"))
}

// The dataset route is not served yet: a node:http server stands in for it, checking what the hook sends.
describe("useDataset against a stand-in for the dataset route", () => {
  const seen: Array<SeenRequest> = []
  const answer = { data: [{ region: "eu", revenue: 80 }, { region: "us", revenue: 70 }], page: { limit: 100, nextCursor: null, hasMore: false } }
  let standIn: Server
  let baseUrl: string

  beforeAll(async () => {
    standIn = createServer((request, response) => {
      void bodyOf(request).then((body) => {
        seen.push({ method: request.method, url: request.url, contentType: request.headers["content-type"], apiKey: request.headers["x-api-key"], body })
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer))
      })
    })
    await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
    baseUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/api/analytics`
  })
  afterAll(() => new Promise<void>((resolve) => standIn.close(() => resolve())))
  afterEach(cleanup)

  it("posts the query as JSON to {baseUrl}/datasets/{name} and answers the page, cached under [\"dataset:\" + name, query]", async () => {
    const { queryClient, wrapper } = provided()
    const hooks = createHooks<typeof api>({ baseUrl, headers: { "x-api-key": "k-acme" } })
    const revenueByRegion = { dimensions: ["region"], measures: ["revenue"], filters: [{ field: "day.month", op: "gte", value: "2024-01-01" }] } as const
    const { result } = renderHook(() => hooks.useDataset("orders", revenueByRegion), { wrapper })
    await waitFor(() => expect(result.current.isSuccess).toBe(true))
    expect(result.current.data).toEqual(answer)
    expect(seen).toEqual([{
      method: "POST",
      url: "/api/analytics/datasets/orders",
      contentType: "application/json",
      apiKey: "k-acme",
      body: revenueByRegion
    }])
    expect(queryClient.getQueryData(datasetKeyOf("orders", revenueByRegion))).toEqual(answer)
    expect(queryClient.getQueryData(["dataset:orders", revenueByRegion])).toEqual(answer)
  })
})
