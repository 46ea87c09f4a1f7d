/** What a handler may return instead of an array of rows: an async iterable or a web ReadableStream. */
export type RowSource = AsyncIterable<unknown> | ReadableStream<unknown>

/** Where a source made by `rowBatches` keeps the batches it was made of. */
const BATCHES: unique symbol = Symbol.for("queryserve.rowBatches")

/** A source of rows read in batches, as databases hand them over (a chunk, a FETCH, a block). */
export type BatchSource<A> = AsyncIterable<ReadonlyArray<A>> | ReadableStream<ReadonlyArray<A>>

async function* eachRow<A>(batches: BatchSource<A>): AsyncGenerator<A, void, undefined> {
  const iterator = rowIterator(batches)
  let done = false
  try {
    for (;;) {
      const next = await iterator.next()
      if (next.done === true) {
        done = true
        return
      }
      yield* next.value
    }
  } finally {
    if (!done) await iterator.return?.()
  }
}

/**
 * Rows that arrive in batches, given as one source of rows. Whoever iterates it gets the rows one
 * by one; a streamed answer reads the batches themselves, and checks and writes each batch's rows
 * without waiting a turn per row: what a long export costs is then the rows, not the awaits. Ending
 * the iteration early ends the batches' iteration (their `finally` runs).
 */
export const rowBatches = <A>(batches: BatchSource<A>): AsyncGenerator<A, void, undefined> =>
  Object.assign(eachRow(batches), { [BATCHES]: batches })

/** The batches a source made by `rowBatches` reads, or undefined for a source of single rows. */
export const batchesOf = (source: RowSource): BatchSource<unknown> | undefined =>
  (source as { readonly [BATCHES]?: BatchSource<unknown> })[BATCHES]

const isReadableStream = <A>(value: object): value is ReadableStream<A> =>
  typeof ReadableStream === "function" && value instanceof ReadableStream

/** Whether a handler's value is a source of rows to stream (not an array, a string or a plain object). */
export const isRowSource = (value: unknown): value is RowSource =>
  typeof value === "object" && value !== null &&
  (typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function" || isReadableStream(value))

/**
 * One iterator over either kind of source. A ReadableStream's reader is released through `return`,
 * which cancels the stream, as an async generator's `return` runs its `finally` blocks. Its `return`
 * never rejects: after the stream failed (the error `next` gave already) there is nothing to cancel.
 */
export const rowIterator = <A = unknown>(source: AsyncIterable<A> | ReadableStream<A>): AsyncIterator<A> => {
  if (!isReadableStream(source)) return source[Symbol.asyncIterator]()
  const reader = source.getReader()
  return {
    next: () => reader.read() as Promise<IteratorResult<A>>,
    return: (value?: unknown) => {
      const done = () => ({ done: true as const, value })
      return reader.cancel().then(done, done)
    }
  }
}

/** The first `count` rows of a source; the iteration is ended (its `return` runs) once they are read. */
export const takeRows = async (source: RowSource, count: number): Promise<Array<unknown>> => {
  const iterator = rowIterator(source)
  const rows: Array<unknown> = []
  let done = false
  try {
    while (rows.length < count) {
      const next = await iterator.next()
      if (next.done === true) {
        done = true
        break
      }
      rows.push(next.value)
    }
  } finally {
    if (!done) await iterator.return?.()
  }
  return rows
}
