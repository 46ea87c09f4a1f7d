import type { ChildProcess } from "node:child_process"
import { spawnPrinting } from "./printedLines.js"

/** A test server program running in its own process, so it can be sent signals without touching the test runner. */
export interface ServerProcess {
  readonly child: ChildProcess
  /** The port from the program's `ready <port>` line. */
  readonly port: number
  /** Resolves once the program printed lines for which `predicate` holds. */
  waitForLines(predicate: (lines: ReadonlyArray<string>) => boolean): Promise<void>
  /** Resolves with the signal (or null) the process ended with. */
  readonly exited: Promise<NodeJS.Signals | null>
  /** SIGKILL if still running: for afterEach. */
  kill(): void
}

export const startServerProcess = async (script: string, args: ReadonlyArray<string> = []): Promise<ServerProcess> => {
  const { child, lines, onOutput: waiters } = spawnPrinting(script, args)
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)))
  const waitForLines = (predicate: (lines: ReadonlyArray<string>) => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate(lines)) return
        waiters.delete(check)
        resolve()
      }
      waiters.add(check)
      void exited.then(() => reject(new Error(`the server exited; output: ${lines.join(" | ")}`)))
      check()
    })
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  try {
    await waitForLines((printed) => printed.some((line) => line.startsWith("ready ")))
  } catch (error) {
    kill()
    throw error
  }
  const port = Number(lines.find((line) => line.startsWith("ready "))!.slice("ready ".length))
  return { child, port, waitForLines, exited, kill }
}
