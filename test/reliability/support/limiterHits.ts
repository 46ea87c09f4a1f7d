/**
 * What the Redis suites send and how they judge it: requests to the fault API's two endpoints counted
 * in the Redis rate-limit store, one failing open, one failing closed.
 */

/** The rate limiter's default store deadline. */
export const STORE_DEADLINE_MS = 250

/**
 * Hits are judged by the phase they were sent in: "healthy" (Redis answers), "failing" (Redis is down
 * or stopped past the hit's deadline: exactly fail-open or fail-closed), "transition" (either).
 */
export type Phase = "healthy" | "failing" | "transition"

export interface Hit {
  readonly phase: Phase
  /** When it was sent (performance.now()). */
  readonly sentAt: number
  readonly failOpen: boolean
  /** The HTTP status, or the fetch error. */
  readonly status: number | string
  /** The answer carries rate-limit headers: the store answered. */
  readonly counted: boolean
  readonly type: string | undefined
  readonly ms: number
}

export const hit = async (port: number, failOpen: boolean, phase: Phase): Promise<Hit> => {
  const sentAt = performance.now()
  const endpoint = failOpen ? "limitedFailOpen" : "limitedFailClosed"
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/analytics/${endpoint}`)
    const body = (await response.json()) as { error?: { type?: string } }
    const counted = response.headers.has("x-ratelimit-limit")
    return { phase, sentAt, failOpen, status: response.status, counted, type: body.error?.type, ms: performance.now() - sentAt }
  } catch (error) {
    return { phase, sentAt, failOpen, status: String(error), counted: false, type: undefined, ms: performance.now() - sentAt }
  }
}

export interface Load {
  /** The phase hits sent from now on are judged by. */
  phase: Phase
  /** Stops sending and resolves every hit once the last ones are answered. */
  stop(): Promise<ReadonlyArray<Hit>>
}

/** `loops` request loops (half to each endpoint), each sending its next request when the last was answered. */
export const startLoad = (port: number, loops = 20): Load => {
  const hits: Array<Hit> = []
  let loading = true
  const load: Load = {
    phase: "transition",
    stop: async () => {
      loading = false
      await Promise.all(running)
      return hits
    }
  }
  const run = async (index: number) => {
    while (loading) hits.push(await hit(port, index % 2 === 0, load.phase))
  }
  const running = Array.from({ length: loops }, (_, index) => run(index))
  return load
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves with how long it took until both limiters count again; throws after `limitMs`. */
export const untilCounting = async (port: number, limitMs = 10_000): Promise<number> => {
  const started = performance.now()
  for (;;) {
    const [open, closed] = await Promise.all([hit(port, true, "transition"), hit(port, false, "transition")])
    if (open.counted && closed.counted) return performance.now() - started
    if (performance.now() - started > limitMs) throw new Error(`the limiters did not count again within ${limitMs} ms`)
    await sleep(50)
  }
}

/** The answer a limiter gives when its store failed: 200 uncounted (fail open) or 503 SERVICE_UNAVAILABLE. */
export const isStoreFailureAnswer = (h: Hit): boolean =>
  !h.counted && (h.failOpen ? h.status === 200 : h.status === 503 && h.type === "SERVICE_UNAVAILABLE")

/**
 * A wrong answer for the hit's phase. With Redis running an answer is counted, unless a loaded machine
 * let the store deadline pass first: then it must be the store-failure answer, and only after the deadline.
 */
export const isWrong = (h: Hit): boolean => {
  switch (h.phase) {
    case "failing":
      return !isStoreFailureAnswer(h)
    case "healthy":
      return h.counted ? h.status !== 200 : !isStoreFailureAnswer(h) || h.ms < STORE_DEADLINE_MS - 5
    case "transition":
      return h.status !== 200 && h.status !== 503
  }
}

/** When Redis was failing: from the stop or kill to the continue or restart (performance.now()). */
export type FailureWindow = readonly [from: number, to: number]

/**
 * Whether a hit sent while Redis was failing was counted by Redis once it was back. The short runs of
 * `npm test` accept it: on a machine loaded by other processes the request itself (or the store
 * deadline, which extends itself by the event loop's lag) can wait past the failure. The long runs
 * judge every such hit wrong.
 */
export const countedAfterRecovery = (h: Hit, windows: ReadonlyArray<FailureWindow>): boolean =>
  h.counted && h.status === 200 && windows.some(([from, to]) => h.sentAt >= from && h.sentAt < to && h.sentAt + h.ms >= to)

/** Healthy hits the deadline cut short: reported, since they show the machine's load rather than a fault. */
export const expiredWhileHealthy = (hits: ReadonlyArray<Hit>): number => hits.filter((h) => h.phase === "healthy" && !h.counted).length
