/**
 * Runs the demo as `npm start` does (`node --import tsx examples/analytics/main.ts`) in a child
 * process on a free loopback port, and reads what it prints.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))
const READY = /\[demo\] ready in (\d+) ms/
const BASE_URL = /queryserve analytics demo: (http:\/\/\S+)/

export interface DemoProcess {
  readonly child: ChildProcess
  /** `http://127.0.0.1:<port>/api/analytics` */
  readonly baseUrl: string
  readonly readyMs: number
  /** Everything printed so far, stdout and stderr interleaved. */
  output(): string
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  stop(signal: NodeJS.Signals): Promise<number | null>
}

/** Starts the demo with `rows` order rows; `env` adds to the environment (DEMO_ENGINE). */
export const startDemo = (rows: number, timeoutMs = 60_000, env: Readonly<Record<string, string>> = {}): Promise<DemoProcess> => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/analytics/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DEMO_ROWS: String(rows), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const stop = (signal: NodeJS.Signals): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  return new Promise((resolve, reject) => {
    let isReady = false
    const timer = setTimeout(() => fail(new Error(`the demo was not ready within ${timeoutMs} ms:\n${output}`)), timeoutMs)
    const fail = (error: Error) => {
      clearTimeout(timer)
      void stop("SIGKILL")
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (isReady) return
      const readyLine = READY.exec(output)
      const baseUrl = BASE_URL.exec(output)?.[1]
      if (readyLine === null || baseUrl === undefined) return
      isReady = true
      clearTimeout(timer)
      resolve({ child, baseUrl, readyMs: Number(readyLine[1]), output: () => output, stop })
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    void exited.then((code) => {
      if (!isReady) fail(new Error(`the demo exited with ${code} before it was ready:\n${output}`))
    })
  })
}
