import type { ChildProcess } from "node:child_process"
import { spawnPrinting } from "./printedLines.js"

/** A cluster program (test/support/clusterServer.ts) in its own process, watched from its first line: it may never get ready. */
export interface ClusterProgram {
  readonly child: ChildProcess
  /** Every line printed so far, by the primary and its workers (they share its stdout). */
  readonly lines: ReadonlyArray<string>
  /** The pids of the workers that printed `worker <pid>`. */
  workerPids(): ReadonlyArray<number>
  /** Resolves once the printed lines satisfy `predicate`; rejects after `timeoutMs` or if the program exits first. */
  waitForLines(predicate: (lines: ReadonlyArray<string>) => boolean, timeoutMs: number): Promise<void>
  /** Resolves with how the primary ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGKILL for the primary and every worker still running: for afterEach. */
  kill(): void
}

const WORKER_LINE = /^worker (\d+)$/

export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export const startClusterProgram = (script: string, args: ReadonlyArray<string> = []): ClusterProgram => {
  const { child, lines, onOutput: onLines } = spawnPrinting(script, args)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const workerPids = (): ReadonlyArray<number> =>
    lines.flatMap((line) => WORKER_LINE.exec(line)?.slice(1).map(Number) ?? [])

  const waitForLines = (predicate: (lines: ReadonlyArray<string>) => boolean, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`no such lines within ${timeoutMs} ms; output: ${lines.join(" | ")}`)), timeoutMs)
      const settle = (error?: Error): void => {
        clearTimeout(timer)
        onLines.delete(check)
        if (error === undefined) resolve()
        else reject(error)
      }
      const check = (): void => {
        if (predicate(lines)) settle()
      }
      onLines.add(check)
      void exited.then(() => (predicate(lines) ? settle() : settle(new Error(`the program exited; output: ${lines.join(" | ")}`))))
      check()
    })

  const kill = (): void => {
    for (const pid of [child.pid, ...workerPids()]) if (pid !== undefined && isRunning(pid)) process.kill(pid, "SIGKILL")
  }
  return { child, lines, workerPids, waitForLines, exited, kill }
}
