/** What a handler may return instead of an array of rows: an async iterable or a web ReadableStream. */
export type RowSource = AsyncIterable<unknown> | ReadableStream<unknown>

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
