import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Scope } from "effect"
import { createFetchHandler, defaultServicesLayer, defineServe, Pipeline, pipelineLayer, ServeHttpError } from "queryserve"
import { settledWithin, sleep } from "../support/settledWithin.js"

class Pool extends Context.Tag("test/Pool")<Pool, { closed: boolean }>() {}

const refusal = { error: { type: "SERVICE_UNAVAILABLE", message: "The server is shutting down" } }

/** A scoped Pool whose release is recorded in `order`. */
const poolLayer = (order: Array<string>) =>
  Layer.scoped(
    Pool,
    Effect.acquireRelease(Effect.sync((): Pool["Type"] => ({ closed: false })), (pool) =>
      Effect.sync(() => {
        pool.closed = true
        order.push("pool released")
      }))
  )

/** An Effect handler that reads the Pool, then waits far longer than any test; its interruption is recorded in `order`. */
const slowHandler = (order: Array<string>, started: () => void) => () =>
  Effect.flatMap(Pool, (pool) =>
    Effect.sync(started).pipe(
      Effect.zipRight(Effect.sleep("1 minute")),
      Effect.as("finished"),
      Effect.onInterrupt(() => Effect.sync(() => order.push(`handler finalizer (pool closed: ${pool.closed})`)))
    ))

const get = (key: string) => ({ method: "GET" as const, path: `/api/analytics/${key}` })

describe("api.dispose() with Effect handlers still running", () => {
  it("interrupts them, runs their finalizers before the layer's release, and answers their callers 503", async () => {
    const order: Array<string> = []
    let started = 0
    const api = defineServe({ layer: poolLayer(order), queries: { slow: slowHandler(order, () => started++) } })
    const executed = api.execute("slow")
    const handled = Promise.resolve(api.handler(get("slow")))
    await expect.poll(() => started).toBe(2)

    await api.dispose()
    expect(order).toEqual(["handler finalizer (pool closed: false)", "handler finalizer (pool closed: false)", "pool released"])
    const rejection = await executed.catch((error: unknown) => error)
    expect(rejection).toBeInstanceOf(ServeHttpError)
    expect(rejection).toMatchObject({ status: 503, type: "SERVICE_UNAVAILABLE", message: "The server is shutting down" })
    const response = await handled
    expect(response.status).toBe(503)
    expect(JSON.parse(response.body!)).toEqual(refusal)
  })

  it("interrupts the handler below a middleware when tracing runs the stages as Effects", async () => {
    const order: Array<string> = []
    let started = 0
    const api = defineServe({
      tracing: true,
      middlewares: [async (_ctx, next) => next()],
      layer: poolLayer(order),
      queries: { slow: slowHandler(order, () => started++) }
    })
    const handled = Promise.resolve(api.handler(get("slow")))
    await expect.poll(() => started).toBe(1)
    await api.dispose()
    expect(order).toEqual(["handler finalizer (pool closed: false)", "pool released"])
    expect((await handled).status).toBe(503)
  })

  it("releases what handlers added to the Scope they see after interrupting them, before the layer's services", async () => {
    const order: Array<string> = []
    let started = 0
    const api = defineServe({
      layer: poolLayer(order),
      queries: {
        // Requires Scope, which handlers have always found in their runtime: released with the API.
        kept: () => Effect.addFinalizer(() => Effect.sync(() => order.push("handler's scope finalizer"))).pipe(Effect.as("kept")),
        slow: slowHandler(order, () => started++)
      }
    })
    expect(await api.execute("kept")).toBe("kept")
    const executed = api.execute("slow").catch((error: ServeHttpError) => error.status)
    await expect.poll(() => started).toBe(1)
    await api.dispose()
    expect(order).toEqual(["handler finalizer (pool closed: false)", "handler's scope finalizer", "pool released"])
    expect(await executed).toBe(503)
  })

  it("lets a plain promise handler finish: it cannot be interrupted, and its answer is still given", async () => {
    const order: Array<string> = []
    const pending: Array<(value: string) => void> = []
    const api = defineServe({
      layer: poolLayer(order),
      queries: { plain: () => new Promise<string>((resolve) => pending.push(resolve)) }
    })
    const handled = Promise.resolve(api.handler(get("plain")))
    const executed = api.execute("plain")
    await expect.poll(() => pending.length).toBe(2)
    await api.dispose()
    for (const resolve of pending) resolve("done")
    expect((await handled).status).toBe(200)
    expect(await executed).toBe("done")
  })
})

describe("calls once api.dispose() was called", () => {
  it("are refused at once with 503, through execute, api.handler and the fetch handler, without running the handler", async () => {
    const runs: Array<string> = []
    const api = defineServe({
      layer: poolLayer([]),
      queries: {
        effect: () => Effect.map(Pool, (pool) => runs.push(`effect (pool closed: ${pool.closed})`)),
        plain: () => runs.push("plain")
      }
    })
    expect(await api.execute("effect")).toBe(1)
    await api.dispose()
    runs.length = 0

    for (const key of ["effect", "plain"] as const) {
      const outcome = await settledWithin(api.execute(key), 100)
      expect(outcome).toMatchObject({ error: { status: 503, type: "SERVICE_UNAVAILABLE", message: "The server is shutting down" } })
      expect((outcome as { error: unknown }).error).toBeInstanceOf(ServeHttpError)

      const response = await settledWithin(Promise.resolve(api.handler({ ...get(key), headers: { "x-request-id": "after-dispose" } })), 100)
      expect(response).toMatchObject({ value: { status: 503, headers: { "x-request-id": "after-dispose" } } })
      expect(JSON.parse((response as { value: { body: string } }).value.body)).toEqual(refusal)

      const fetched = await settledWithin(createFetchHandler(api.handler)(new Request(`http://x.test/api/analytics/${key}`)), 100)
      expect(fetched).toMatchObject({ value: { status: 503 } })
      expect(await (fetched as { value: Response }).value.json()).toEqual(refusal)
    }
    expect(runs).toEqual([])
  })

  it("are refused from the moment dispose() is called, before it resolves", async () => {
    let runs = 0
    const api = defineServe({ layer: poolLayer([]), queries: { plain: () => ++runs } })
    const disposed = api.dispose()
    const response = api.handler(get("plain"))
    expect(response).not.toBeInstanceOf(Promise)
    expect((response as { status: number }).status).toBe(503)
    await expect(api.execute("plain")).rejects.toMatchObject({ status: 503, type: "SERVICE_UNAVAILABLE" })
    await disposed
    expect(runs).toBe(0)
  })

  it("are refused, with no unhandled rejection, when an async config.layer was still being built", async () => {
    const unhandled: Array<unknown> = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on("unhandledRejection", onUnhandled)
    try {
      const layer = Layer.effect(Pool, Effect.delay(Effect.sync(() => ({ closed: false })), "50 millis"))
      const api = defineServe({ layer, queries: { effect: () => Effect.map(Pool, (pool) => pool.closed) } })
      const waiting = api.execute("effect")
      const waitingRequest = Promise.resolve(api.handler(get("effect")))
      await api.dispose()
      await expect(settledWithin(waiting, 100)).resolves.toMatchObject({ error: { status: 503, type: "SERVICE_UNAVAILABLE" } })
      expect((await waitingRequest).status).toBe(503)
      await expect(settledWithin(api.execute("effect"), 100)).resolves.toMatchObject({ error: { status: 503 } })
      await sleep(20)
      expect(unhandled).toEqual([])
    } finally {
      process.off("unhandledRejection", onUnhandled)
    }
  })
})

describe("operations on the API once api.dispose() was called", () => {
  it("start() and the cache controls reject, saying the API was disposed", async () => {
    const api = defineServe({ resultCache: {}, queries: { plain: () => 1 } })
    expect(await api.cache.stats()).toMatchObject({ entries: 0 })
    await api.dispose()
    const disposed = (caller: string) => new Error(`${caller}: this API was disposed (api.dispose()); define it again to use it`)
    await expect(settledWithin(api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false }), 1000)).resolves.toEqual({ error: disposed("start()") })
    await expect(api.cache.invalidate()).rejects.toEqual(disposed("cache.invalidate()"))
    await expect(api.cache.stats()).rejects.toEqual(disposed("cache.stats()"))
  })
})

describe("api.dispose() twice", () => {
  it("is fine: a second call resolves once the first release is done, a later one at once", async () => {
    const order: Array<string> = []
    const layer = Layer.scoped(
      Pool,
      Effect.acquireRelease(Effect.sync(() => ({ closed: false })), () =>
        Effect.sleep("50 millis").pipe(Effect.andThen(() => order.push("pool released"))))
    )
    const api = defineServe({ layer, queries: { effect: () => Effect.map(Pool, (pool) => pool.closed) } })
    expect(await api.execute("effect")).toBe(false)
    const first = api.dispose().then(() => order.push("first resolved"))
    const second = api.dispose().then(() => order.push("second resolved"))
    await Promise.all([first, second])
    expect(order).toEqual(["pool released", "first resolved", "second resolved"])
    await expect(settledWithin(api.dispose(), 100)).resolves.toEqual({ value: undefined })
    expect(order.filter((entry) => entry === "pool released")).toHaveLength(1)
  })
})

describe("the Pipeline layer, for Effect users", () => {
  it.effect("refuses requests once its scope is closed, and interrupts the handlers it runs", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const started = yield* Deferred.make<void>()
      const config = {
        queries: {
          slow: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Effect.sync(() => order.push("handler finalizer")))
            )
        }
      }
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(pipelineLayer(config).pipe(Layer.provide(defaultServicesLayer)), scope)
      const pipeline = Context.get(context, Pipeline)
      const running = Promise.resolve(pipeline.handle(get("slow")))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      expect(order).toEqual(["handler finalizer"])
      expect((yield* Effect.promise(() => running)).status).toBe(503)
      const after = pipeline.handle(get("slow"))
      expect((after as { status: number }).status).toBe(503)
    })
  )
})
