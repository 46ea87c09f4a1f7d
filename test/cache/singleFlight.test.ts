import { defineServe, makeTestResultCacheStore, type ServeContext, testResultCacheStore } from "queryserve"
import { afterEach, describe, expect, it, vi } from "vitest"
import { get } from "./support/requests.js"


/** A handler whose runs are counted and each answer after `ms`, failing while `failures` lasts. */
const slowHandler = (ms: number) => {
  const state = { runs: 0, failures: 0 }
  const query = ({ input }: { input: { id?: string } }) => {
    const run = ++state.runs
    return new Promise((resolve, reject) =>
      setTimeout(() => (state.failures-- > 0 ? reject(new Error(`run ${run} failed`)) : resolve({ id: input.id ?? "-", run })), ms))
  }
  return { state, query }
}

const stores = [
  ["memory store", () => true as const],
  ["a remote-like store (answers with promises)", () => ({ store: testResultCacheStore(makeTestResultCacheStore()) })]
] as const

describe.each(stores)("single flight with the %s", (_label, resultCache) => {
  it("runs the handler once for 200 concurrent identical cold requests; the others wait and count as hits", async () => {
    const { state, query } = slowHandler(20)
    const api = defineServe({ resultCache: resultCache(), queries: { report: { cacheTtlMs: 60_000, query } } })
    const answers = await Promise.all(Array.from({ length: 200 }, () => Promise.resolve(api.handler(get("report", { id: "x" })))))
    expect(state.runs).toBe(1)
    expect(answers.filter((answer) => answer.headers["x-cache"] === "MISS")).toHaveLength(1)
    expect(answers.filter((answer) => answer.headers["x-cache"] === "HIT")).toHaveLength(199)
    expect(new Set(answers.map((answer) => answer.body))).toEqual(new Set(['{"id":"x","run":1}']))
    expect(await api.cache.stats()).toMatchObject({ hits: 199, misses: 1, entries: 1 })
  })

  it("does not join requests of different keys", async () => {
    const { state, query } = slowHandler(10)
    const api = defineServe({ resultCache: resultCache(), queries: { report: { cacheTtlMs: 60_000, query } } })
    await Promise.all(["a", "b", "a", "b", "c"].map((id) => Promise.resolve(api.handler(get("report", { id })))))
    expect(state.runs).toBe(3)
  })

  it("does not share a run whose handler made its result private (TTL 0): each waiting request runs its own", async () => {
    let runs = 0
    const api = defineServe({
      resultCache: resultCache(),
      queries: {
        whoami: {
          cacheTtlMs: 60_000,
          query: ({ ctx }: { ctx: ServeContext }) => {
            runs++
            ctx.setCacheTtl(0)
            return new Promise((resolve) => setTimeout(() => resolve({ user: ctx.request.headers?.["x-user"] }), 20))
          }
        }
      }
    })
    const users = ["ann", "bob", "cid"]
    const answers = await Promise.all(users.map((user) => Promise.resolve(api.handler({ ...get("whoami"), headers: { "x-user": user } }))))
    expect(answers.map((answer) => JSON.parse(answer.body!).user)).toEqual(users)
    expect(answers.map((answer) => answer.headers["x-cache"])).toEqual(["MISS", "MISS", "MISS"])
    expect(runs).toBe(3)
  })

  it("lets the waiters of a failed run try once more: one of them runs again and the others share that run", async () => {
    const { state, query } = slowHandler(20)
    state.failures = 1
    const api = defineServe({ resultCache: resultCache(), queries: { report: { cacheTtlMs: 60_000, query } } })
    const answers = await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(api.handler(get("report")))))
    expect(state.runs).toBe(2)
    // The failed run's own request gets its error; no waiter does.
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(49).fill(200), 500])
    expect(answers.filter((answer) => answer.status === 200).every((answer) => answer.body === '{"id":"-","run":2}')).toBe(true)
  })

  it("lets waiters try again each time the run they waited on failed because its own request was aborted", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {})
    let runs = 0
    const api = defineServe({
      resultCache: resultCache(),
      queries: {
        report: {
          cacheTtlMs: 60_000,
          // A query that honours ctx.signal: it fails when its client goes away.
          query: ({ ctx }: { ctx: ServeContext }) => {
            runs++
            return new Promise((resolve, reject) => {
              const timer = setTimeout(() => resolve({ rows: [1, 2, 3] }), 40)
              ctx.signal.addEventListener("abort", () => {
                clearTimeout(timer)
                reject(new Error("client went away"))
              })
            })
          }
        }
      }
    })
    const ask = (signal?: AbortSignal) => Promise.resolve(api.handler(signal === undefined ? get("report") : { ...get("report"), signal }))
    const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const [first, second, gone] = [new AbortController(), new AbortController(), new AbortController()]
    // The first leads; the others wait. Its abort makes the second the leader of the retry, which is aborted too.
    const answers = [ask(first.signal), ask(second.signal), ask(), ask(gone.signal)]
    await tick(5)
    first.abort()
    gone.abort()
    await tick(5)
    second.abort()
    const [firstAnswer, secondAnswer, waiter, goneAnswer] = await Promise.all(answers)
    expect([firstAnswer!.status, secondAnswer!.status]).toEqual([500, 500])
    expect([waiter!.status, waiter!.headers["x-cache"], JSON.parse(waiter!.body!)]).toEqual([200, "MISS", { rows: [1, 2, 3] }])
    // A waiter whose own request was aborted meanwhile gets the failure instead of trying again.
    expect(goneAnswer!.status).toBe(500)
    expect(runs).toBe(3)
    vi.restoreAllMocks()
  })

  it("hands a second failure to the waiters of the retry: a failing query runs twice, not once per request", async () => {
    const { state, query } = slowHandler(20)
    state.failures = 1_000
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const api = defineServe({ resultCache: resultCache(), queries: { report: { cacheTtlMs: 60_000, query } } })
    const answers = await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(api.handler(get("report")))))
    expect(state.runs).toBe(2)
    expect(answers.every((answer) => answer.status === 500)).toBe(true)
    errors.mockRestore()
  })
})

describe("a failing result cache store", () => {
  afterEach(() => vi.restoreAllMocks())

  it("is bypassed: every request is answered by running the query, the outage is logged once, hits resume when it answers", async () => {
    const store = makeTestResultCacheStore()
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    let runs = 0
    const api = defineServe({
      resultCache: { store: testResultCacheStore(store) },
      queries: { report: { cacheTtlMs: 60_000, query: async () => ({ run: ++runs }) } }
    })
    await api.handler(get("report"))
    store.failWith(new Error("store down"))
    const setsBefore = store.calls.set
    const during = []
    for (let i = 0; i < 5; i++) during.push(await api.handler(get("report")))
    expect(during.map((answer) => [answer.status, answer.headers["x-cache"]])).toEqual(Array(5).fill([200, "MISS"]))
    expect(runs).toBe(6)
    // No result is sent to a store known to be down: a stalled Redis client would queue every one.
    expect(store.calls.set).toBe(setsBefore)
    const logged = errors.mock.calls.filter(([message]) => String(message).includes("result cache store failed"))
    expect(logged).toHaveLength(1)
    await expect(api.cache.stats()).rejects.toThrow("store down")
    await expect(api.cache.invalidate()).rejects.toThrow("store down")

    store.failWith(undefined)
    await api.handler(get("report"))
    expect((await api.handler(get("report"))).headers["x-cache"]).toBe("HIT")
    // A new outage is reported again.
    store.failWith(new Error("down again"))
    await api.handler(get("report"))
    expect(errors.mock.calls.filter(([message]) => String(message).includes("result cache store failed"))).toHaveLength(2)
  })

  it("keeps single flight while the store is down: concurrent requests still run the query once", async () => {
    const store = makeTestResultCacheStore()
    store.failWith(new Error("store down"))
    vi.spyOn(console, "error").mockImplementation(() => {})
    const { state, query } = slowHandler(20)
    const api = defineServe({ resultCache: { store: testResultCacheStore(store) }, queries: { report: { cacheTtlMs: 60_000, query } } })
    const answers = await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(api.handler(get("report")))))
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    expect(state.runs).toBe(1)
  })
})
