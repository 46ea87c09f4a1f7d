import type { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"

/** Default `responseTimeoutMs`: 30 s. */
export const DEFAULT_RESPONSE_TIMEOUT = 30_000

const TURNS = Symbol("queryserve.connectionTurns")

type Connection = Socket & { [TURNS]?: Turns }

/** How a request is served once its turn came. */
type Serve = (req: IncomingMessage, res: ServerResponse) => void

/**
 * The requests of one connection, served one at a time. node:http parses every pipelined request at
 * once and only orders their answers: without turns, a client could start any number of queries
 * with one write, and HTTP-level limits would see them as one connection's traffic.
 */
class Turns {
  private busy = false
  /** Each with the listener that serves it: one connection may reach several APIs' listeners in a framework. */
  private readonly waiting: Array<readonly [IncomingMessage, ServerResponse, Serve]> = []

  constructor(private readonly socket: Socket) {}

  take(req: IncomingMessage, res: ServerResponse, serve: Serve): void {
    if (this.busy) return void this.waiting.push([req, res, serve])
    this.run(req, res, serve)
  }

  private run(req: IncomingMessage, res: ServerResponse, serve: Serve): void {
    this.busy = true
    // 'close' follows 'finish' (the whole answer handed to the socket) and comes too when the client left.
    res.on("close", this.next)
    serve(req, res)
  }

  /** The previous answer is done: the next request starts, unless the connection is gone (its requests with it). */
  private readonly next = (): void => {
    const following = this.socket.destroyed ? undefined : this.waiting.shift()
    if (following !== undefined) return this.run(...following)
    this.waiting.length = 0
    this.busy = false
  }
}

/**
 * `serve` for each request once every earlier request of its connection was answered. A stand-in
 * without a socket (a serverless shim) is served at once. A connection's turns are shared by every
 * listener it reaches.
 */
export const inTurns = (serve: Serve): Serve => (req, res) => {
  const socket = req.socket as Connection | null | undefined
  if (socket === null || socket === undefined || typeof res.on !== "function") return serve(req, res)
  ;(socket[TURNS] ??= new Turns(socket)).take(req, res, serve)
}

/**
 * Closes the connection unless the client takes what was written of the answer within `timeoutMs`
 * (0: never): until `until` comes, "drain" (the socket took a write it had to hold) or "finish"
 * (the whole answer went out). A client that reads nothing would otherwise hold its connection,
 * and the answer in memory, for as long as it likes.
 */
export const closeUnlessTaken = (res: ServerResponse, timeoutMs: number, until: "drain" | "finish"): void => {
  if (timeoutMs <= 0 || res.destroyed || (until === "finish" ? res.writableFinished : !res.writableNeedDrain)) return
  // A stand-in that is no stream (a test's, a serverless shim's) has no socket to close.
  if (typeof res.on !== "function") return
  const timer = setTimeout(() => res.destroy(), timeoutMs)
  timer.unref()
  const taken = (): void => {
    clearTimeout(timer)
    res.off(until, taken)
    res.off("close", taken)
  }
  res.on(until, taken)
  res.on("close", taken)
}

/**
 * Gives a buffered answer `timeoutMs` to reach the client, unless the socket took it at once (the
 * common case, which costs no timer): `end()` was called and nothing waits in the socket.
 */
export const closeUnlessRead = (res: ServerResponse, timeoutMs: number): void => {
  if (res.writableEnded && res.writableLength === 0) return
  closeUnlessTaken(res, timeoutMs, "finish")
}
