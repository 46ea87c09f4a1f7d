/**
 * A streamed answer: the rows of a handler's async iterable or ReadableStream, pulled one at a time
 * as the transport takes them, and ended (the iterator's `return()` run) when the client leaves.
 */
import { ClientClosed } from "../domain/clientClosed.js"
import { GatewayTimeout } from "../domain/errors.js"
import type { ServeResponse } from "../domain/http.js"
import { andThen, type MaybePromise, isPromiseLike } from "../domain/maybePromise.js"
import type { CompiledSchema } from "../domain/schema.js"
import { TransportRequest } from "../domain/transportRequest.js"
import type { RowWriter } from "./formats.js"
import { batchesOf, isRowSource, type RowSource, rowIterator } from "./rowSource.js"

/** How a streamed answer ended: every row sent, or cut by an error, the client leaving or a timeout. */
interface StreamOutcome {
  readonly rows: number
  /** Undefined when every row was sent. */
  readonly error?: unknown
}

const DONE: IteratorResult<unknown> = { done: true, value: undefined }

/** What `takeBuffered` gives when no row of a batch is waiting. */
export const NOTHING_BUFFERED: unique symbol = Symbol("queryserve.nothingBuffered")

/** How the rows of a stream are checked against the declared output: one row, or a batch at once. */
export interface RowEncoding {
  readonly row: (row: unknown) => MaybePromise<unknown>
  readonly rows: (rows: ReadonlyArray<unknown>) => MaybePromise<unknown>
}

const EMPTY: ReadonlyArray<unknown> = []

const notABatch = (): TypeError => new TypeError("A source made by rowBatches gave a batch that is not an array of rows")

/** Chunks handed to the transport are about this many characters: one write per batch of small rows. */
const CHUNK_CHARS = 16 * 1024

export class RowStream implements AsyncIterable<unknown> {
  /** Rows read so far. */
  rows = 0
  private readonly iterator: AsyncIterator<unknown>
  /** Whether the iterator gives batches of rows (a source made by `rowBatches`) rather than rows. */
  private readonly batched: boolean
  /** The rows of the batch being read, checked already, and the next one's index. */
  private buffer: ReadonlyArray<unknown> = EMPTY
  private index = 0
  private outcome: StreamOutcome | undefined = undefined
  private readonly listeners: Array<(outcome: StreamOutcome) => void> = []
  /** Rejects the wait for the row being read: how a cancel ends a wait the source would not end. */
  private rejectWait: ((reason: unknown) => void) | undefined = undefined
  /** The request it answers: aborted when the stream is cancelled, so that `ctx.signal` aborts too. */
  request: unknown = undefined

  constructor(source: RowSource, private readonly encoding: RowEncoding | undefined) {
    const batches = batchesOf(source)
    this.batched = batches !== undefined
    this.iterator = rowIterator(batches ?? source)
  }

  get ended(): boolean {
    return this.outcome !== undefined
  }

  /**
   * Reads the first row before the answer is committed: an error there is answered with the usual
   * envelope. `signal` (the request's) ends the wait, as the request's deadline passing does. A
   * stream without rows has ended complete once this resolves.
   */
  start(signal: AbortSignal): Promise<IteratorResult<unknown>> {
    const onAbort = () => this.cancel(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener("abort", onAbort, { once: true })
    return this.next().finally(() => signal.removeEventListener("abort", onAbort))
  }

  /** A row of the batch being read, or NOTHING_BUFFERED: the writer takes a batch's rows without a turn per row. */
  takeBuffered(): unknown {
    if (this.index >= this.buffer.length || this.outcome !== undefined) return NOTHING_BUFFERED
    this.rows++
    return this.buffer[this.index++]
  }

  private async pull(): Promise<IteratorResult<unknown>> {
    for (;;) {
      const buffered = this.takeBuffered()
      if (buffered !== NOTHING_BUFFERED) return { done: false, value: buffered }
      if (this.outcome !== undefined) throw this.outcome.error
      // A promise of its own per read, not a race with one long-lived promise: that one would keep
      // a reaction for every row read.
      const pending = this.iterator.next()
      const next = await new Promise<IteratorResult<unknown>>((resolve, reject) => {
        this.rejectWait = reject
        pending.then(resolve, reject)
      })
      this.rejectWait = undefined
      if (next.done === true) return DONE
      if (!this.batched) {
        this.rows++
        const value = this.encoding === undefined ? next.value : this.encoding.row(next.value)
        return { done: false, value: isPromiseLike(value) ? await value : value }
      }
      if (!Array.isArray(next.value)) throw notABatch()
      const rows = this.encoding === undefined ? next.value : this.encoding.rows(next.value)
      this.buffer = (isPromiseLike(rows) ? await rows : rows) as ReadonlyArray<unknown>
      this.index = 0
    }
  }

  /** The next row; after the last, the stream ends as complete, and on an error as failed. */
  async next(): Promise<IteratorResult<unknown>> {
    try {
      const next = await this.pull()
      if (next.done === true) this.end(undefined)
      return next
    } catch (error) {
      this.end(error)
      throw error
    }
  }

  /** Why the stream ended early; undefined while it runs or once it completed. */
  get failure(): unknown {
    return this.outcome?.error
  }

  /** Ends the stream early: the iterator's `return()` runs, the request's signal aborts with `reason`. */
  cancel(reason: unknown): void {
    if (this.outcome !== undefined) return
    // The request first: whoever hears of the end then knows whether its client left.
    if (this.request instanceof TransportRequest) this.request.abort(reason)
    this.end(reason)
    this.iterator.return?.().then(undefined, () => undefined)
  }

  /** Told how the stream ended, once; at once when it has. */
  onEnd(listener: (outcome: StreamOutcome) => void): void {
    if (this.outcome !== undefined) listener(this.outcome)
    else this.listeners.push(listener)
  }

  private end(error: unknown): void {
    if (this.outcome !== undefined) return
    const outcome: StreamOutcome = error === undefined ? { rows: this.rows } : { rows: this.rows, error }
    this.outcome = outcome
    this.rejectWait?.(error)
    for (const listener of this.listeners.splice(0)) listener(outcome)
  }

  /** In-process callers (`execute`) read the rows themselves; leaving the loop early cancels the stream. */
  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return {
      next: () => this.next(),
      return: (value?: unknown) => {
        this.cancel(new Error("The caller stopped reading the rows"))
        return Promise.resolve({ done: true, value })
      }
    }
  }

  /** A streamed answer has no JSON text of its own: the result cache, which would store one, cannot hold it. */
  toJSON(): never {
    throw new TypeError("A streamed answer (an async iterable or ReadableStream of rows) cannot be result-cached: give the endpoint no cacheTtlMs")
  }
}

/** What a streamed answer carries to the adapters: its rows, how to write them, and the text of the first. */
export interface StreamedBody {
  readonly stream: RowStream
  readonly writer: RowWriter
  /** The answer's opening text: the first row written, or the whole of an answer without rows. */
  readonly opening: string
  /** Whether rows follow the opening (false for an answer without rows). */
  readonly more: boolean
}

/** Where a ServeResponse keeps its streamed body (its `body` is null): a symbol, so no part of its data. */
export const STREAMED: unique symbol = Symbol("queryserve.streamed")

export interface StreamedResponse extends ServeResponse {
  readonly [STREAMED]?: StreamedBody
}

export const streamedBodyOf = (response: ServeResponse): StreamedBody | undefined => (response as StreamedResponse)[STREAMED]

/**
 * Writes a streamed body through `write`, which returns a promise while the transport is full: the
 * next row is pulled only once it has taken more. Rows are gathered into chunks of about 16 KiB; a
 * chunk not yet full goes out when no row came within a turn of the event loop, so a slow source's
 * rows are not held back. `timeoutMs` (0: none) bounds the wait for each row, and for the transport
 * to take each full chunk; `write`'s promise must settle once the stream ends (see `onEnd`). Resolves once the last
 * row is written, rejects when the stream failed or was cancelled; the stream has ended either way.
 */
export const pumpRows = async (
  body: StreamedBody,
  write: (chunk: string) => void | Promise<void>,
  timeoutMs: number
): Promise<void> => {
  const { stream, writer } = body
  let batch = body.opening
  let waitingSince = 0
  let flushTimer: ReturnType<typeof setTimeout> | undefined
  const flushLater = () => {
    flushTimer = undefined
    if (batch.length === 0 || stream.ended) return
    const chunk = batch
    batch = ""
    void write(chunk)
  }
  const watchdog = timeoutMs > 0 && body.more
    ? setInterval(() => {
      if (waitingSince > 0 && performance.now() - waitingSince > timeoutMs) {
        stream.cancel(new GatewayTimeout({ message: `No row was read or written for ${timeoutMs} ms`, timeoutMs }))
      }
    }, Math.min(1000, Math.max(5, Math.round(timeoutMs / 20))))
    : undefined
  ;(watchdog as { unref?: () => void } | undefined)?.unref?.()
  try {
    if (body.more) {
      for (;;) {
        if (batch.length >= CHUNK_CHARS) {
          const chunk = batch
          batch = ""
          const full = write(chunk)
          if (full !== undefined) {
            // A client that takes nothing is held no longer than a source that gives nothing.
            waitingSince = performance.now()
            await full
            waitingSince = 0
          }
          if (stream.ended) break
        } else if (batch.length > 0 && flushTimer === undefined) {
          flushTimer = setTimeout(flushLater, 0)
        }
        let row = stream.takeBuffered()
        if (row === NOTHING_BUFFERED) {
          waitingSince = performance.now()
          const next = await stream.next()
          waitingSince = 0
          if (next.done === true) break
          row = next.value
        }
        batch += writer.next(row)
      }
      if (stream.failure !== undefined) throw stream.failure
      batch += writer.close()
    }
    if (flushTimer !== undefined) clearTimeout(flushTimer)
    flushTimer = undefined
    if (batch.length > 0) await write(batch)
  } catch (error) {
    stream.cancel(error)
    throw error
  } finally {
    if (flushTimer !== undefined) clearTimeout(flushTimer)
    if (watchdog !== undefined) clearInterval(watchdog)
  }
  // Cancelled while its last chunk was being written: the answer was not complete.
  if (stream.failure !== undefined) throw stream.failure
}

const encoder = new TextEncoder()

/**
 * A streamed body as a web ReadableStream of UTF-8 chunks that pulls rows as its reader takes them
 * (one chunk queued at most): the body of a fetch Response, the source of an Effect Stream. Cancelling
 * it is the client leaving (the stream is cancelled with ClientClosed); a stream that fails after its
 * opening errors it, so the transfer is cut.
 */
export const readableRows = (body: StreamedBody, timeoutMs: number): ReadableStream<Uint8Array> => {
  const { stream } = body
  let resume: (() => void) | undefined
  const wake = () => {
    const waiting = resume
    resume = undefined
    waiting?.()
  }
  stream.onEnd(wake)
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const write = (chunk: string): Promise<void> | undefined => {
          controller.enqueue(encoder.encode(chunk))
          return (controller.desiredSize ?? 1) > 0 ? undefined : new Promise<void>((resolve) => (resume = resolve))
        }
        pumpRows(body, write, timeoutMs).then(
          () => controller.close(),
          (error: unknown) => {
            // After `cancel` the body is closed already: erroring it again would throw.
            if (!(stream.failure instanceof ClientClosed)) controller.error(error)
          }
        )
      },
      pull: wake,
      cancel: () => stream.cancel(new ClientClosed())
    },
    { highWaterMark: 1 }
  )
}

/** At most `max` rows of a stream, and whether it had more (the stream is then cancelled): for callers that cannot stream. */
export const collectRows = async (stream: RowStream, max: number): Promise<{ readonly rows: Array<unknown>; readonly truncated: boolean }> => {
  const rows: Array<unknown> = []
  for (;;) {
    const next = await stream.next()
    if (next.done === true) return { rows, truncated: false }
    if (rows.length === max) {
      stream.cancel(new Error(`Only the first ${max} rows were taken`))
      return { rows, truncated: true }
    }
    rows.push(next.value)
  }
}

/**
 * The output schema of an endpoint whose handler may stream: a row source becomes a RowStream whose
 * rows are each encoded as an element of the declared output (an array's items), or left as they are
 * without one. Any other value is encoded as before.
 */
export const withRowStreams = (output: CompiledSchema, declared: boolean): CompiledSchema => {
  const encoding: RowEncoding | undefined = declared
    ? { row: (row) => andThen(output.encode([row]), (rows) => (rows as ReadonlyArray<unknown>)[0]), rows: output.encode }
    : undefined
  return { ...output, encode: (value) => (isRowSource(value) ? new RowStream(value, encoding) : output.encode(value)) }
}
