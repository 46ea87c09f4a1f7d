import type { MockInstance } from "vitest"

/** Resolves once the event loop's current turn is over: the built-in query logs write a turn's lines at its end. */
export const turnEnd = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The lines a console.log spy received, one per log line, once the lines held back this turn were written. */
export const writtenLogLines = async (log: MockInstance): Promise<Array<string>> => {
  await turnEnd()
  return log.mock.calls.flatMap((call) => String(call[0]).split("\n"))
}
