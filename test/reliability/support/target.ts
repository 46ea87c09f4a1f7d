/**
 * Runs targetServer.ts in a child process and watches it. A crash is counted and the server is
 * started again (on new ports), so one crashing request cannot hide what the rest of a run finds.
 */
import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { TargetConfig } from "./targetConfig.js"

const SCRIPT = fileURLToPath(new URL("./targetServer.ts", import.meta.url))
const READY = /^ready (\{.*\})$/m

export const DEFAULT_TARGET: TargetConfig = {
  rows: 20_000,
  bodyLimit: 256 * 1024,
  rateLimitPerSecond: 1_000_000,
  faultRequestTimeout: 400
}

export interface Ports {
  readonly demo: number
  readonly faults: number
  readonly shapes: number
}

export interface Memory {
  readonly rss: number
  readonly heapUsed: number
}

export interface Target {
  /** The ports of the process running now. */
  ports(): Ports
  /** Unexpected exits so far. */
  readonly crashes: number
  /** Resolves once a process is serving (at once, unless a crashed one is being replaced). */
  whenRunning(): Promise<void>
  /** The running process. */
  readonly child: ChildProcess
  /** stderr of every process so far. */
  stderr(): string
  /** Memory of the server process after a full GC. */
  memory(): Promise<Memory>
  /** Sends `signal` to the running process (no restart afterwards); resolves with how it ended. */
  signal(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Kills the process (no restart). */
  stop(): Promise<void>
}

interface Running {
  readonly child: ChildProcess
  readonly ports: Ports
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const launch = (config: TargetConfig, log: (text: string) => void, timeoutMs: number): Promise<Running> =>
  new Promise((resolve, reject) => {
    const child = fork(SCRIPT, [JSON.stringify(config)], {
      execArgv: ["--import", "tsx", "--expose-gc"],
      stdio: ["ignore", "pipe", "pipe", "ipc"]
    })
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once("exit", (code, signal) => done({ code, signal }))
    )
    let stdout = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the server was not ready within ${timeoutMs} ms:\n${stdout}`))
    }, timeoutMs)
    child.stderr!.on("data", (chunk: Buffer) => log(chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const ready = READY.exec(stdout)
      if (ready === null) return
      clearTimeout(timer)
      resolve({ child, ports: JSON.parse(ready[1]!) as Ports, exited })
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`the server exited (${code ?? signal}) before it was ready:\n${stdout}`))
    })
  })

export interface Supervision {
  /** Start a new process when it exits unexpectedly (default true). */
  readonly restart?: boolean
  readonly timeoutMs?: number
}

export const startTarget = async (overrides: Partial<TargetConfig> = {}, supervision: Supervision = {}): Promise<Target> => {
  const config = { ...DEFAULT_TARGET, ...overrides }
  const timeoutMs = supervision.timeoutMs ?? 90_000
  let stderr = ""
  const log = (text: string) => void (stderr += text)
  let running = await launch(config, log, timeoutMs)
  let crashes = 0
  let supervised = true
  let restarting: Promise<void> | undefined
  let memoryAnswers: Promise<unknown> = Promise.resolve()

  const supervise = (current: Running): void => {
    void current.exited.then(() => {
      if (!supervised || current !== running) return
      crashes++
      if (supervision.restart === false) return
      restarting = launch(config, log, timeoutMs).then((next) => {
        running = next
        supervise(next)
      })
    })
  }
  supervise(running)

  return {
    ports: () => running.ports,
    get crashes() {
      return crashes
    },
    get child() {
      return running.child
    },
    whenRunning: () => restarting ?? Promise.resolve(),
    stderr: () => stderr,
    // One question at a time: every pending `once` listener would take the first answer.
    memory: () => {
      const answer = memoryAnswers.then(
        () =>
          new Promise<Memory>((resolve) => {
            running.child.once("message", (message) => resolve(message as Memory))
            running.child.send("memory")
          })
      )
      memoryAnswers = answer
      return answer
    },
    signal: (signal) => {
      supervised = false
      running.child.kill(signal)
      return running.exited
    },
    stop: async () => {
      supervised = false
      await restarting?.catch(() => undefined)
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL")
      await running.exited
    }
  }
}
