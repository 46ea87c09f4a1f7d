import { type ChildProcess, spawn } from "node:child_process"

/** A test program run with tsx in a process of its own, and the lines it prints, as they come. */
export interface PrintingProcess {
  readonly child: ChildProcess
  /** Every complete line printed so far. */
  readonly lines: ReadonlyArray<string>
  /** Called after each chunk of output; remove what you add. */
  readonly onOutput: Set<() => void>
}

export const spawnPrinting = (script: string, args: ReadonlyArray<string>): PrintingProcess => {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "inherit"] })
  const lines: Array<string> = []
  const onOutput = new Set<() => void>()
  let buffered = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8")
    const parts = buffered.split("\n")
    buffered = parts.pop() ?? ""
    lines.push(...parts)
    for (const notify of onOutput) notify()
  })
  return { child, lines, onOutput }
}
