import { type ChildProcess, spawn } from "node:child_process"

/** A runtime (Bun, Deno, workerd) serving on loopback in a child process of its own. */
export interface RuntimeProcess {
  readonly child: ChildProcess
  /** What it printed, for failure messages. */
  output(): string
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(): Promise<void>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/**
 * Starts `command args` and resolves once `readyUrl` answers (any status), or rejects with its output
 * when it exits first or does not answer within `timeoutMs` (generous: the machine may be busy).
 */
export const startRuntime = async (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly readyUrl: string; readonly env?: Readonly<Record<string, string>>; readonly timeoutMs?: number }
): Promise<RuntimeProcess> => {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] })
  let printed = ""
  const keep = (chunk: Buffer): void => {
    printed = (printed + chunk.toString("utf8")).slice(-4000)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async (): Promise<void> => {
    if (exited(child)) return
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), 3_000)
    await gone
    clearTimeout(killer)
  }
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    if (exited(child)) throw new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before serving:\n${printed}`)
    try {
      await (await fetch(options.readyUrl, { signal: AbortSignal.timeout(2_000) })).arrayBuffer()
      return { child, output: () => printed, stop }
    } catch {
      if (Date.now() > deadline) {
        await stop()
        throw new Error(`${command} did not answer ${options.readyUrl} in time:\n${printed}`)
      }
      await sleep(100)
    }
  }
}
