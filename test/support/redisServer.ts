import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { freePort } from "./freePort.js"

/** A redis-server child on a loopback port, for tests. */
export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Kills the server at once (SIGKILL), like a crash. */
  kill(): Promise<void>
  /** Starts a fresh server on the same port after `kill`. */
  restart(): Promise<void>
  /** Stops the process (SIGSTOP): connections stay open, commands are accepted and never answered. */
  pause(): void
  /** Lets a paused server go on (SIGCONT); it then answers what it accepted meanwhile. */
  resume(): void
  stop(): Promise<void>
}

export interface RedisServerOptions {
  /** `requirepass`: clients must authenticate with this password. */
  readonly password?: string
}

/**
 * Why Redis tests cannot run here, or undefined when they can. Locally a missing binary skips them;
 * in CI (CI=true) it is a failure, because `.ci/run` installs redis-server.
 */
export const redisUnavailable = (): string | undefined => {
  const found = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0
  if (found) return undefined
  if (process.env.CI === "true") throw new Error("redis-server is not installed, and CI=true requires the Redis tests to run")
  const reason = "redis-server is not installed: skipping the Redis tests (CI installs it and runs them)"
  console.warn(reason)
  return reason
}

const launch = (port: number, options: RedisServerOptions): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      "redis-server",
      [
        "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no",
        ...(options.password === undefined ? [] : ["--requirepass", options.password])
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`redis-server did not start within 10 s:\n${output}`))
    }, 10_000)
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve(child)
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code}:\n${output}`))
    })
  })

const exited = (child: ChildProcess, signal: NodeJS.Signals): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill(signal)
  })

export const startRedis = async (options: RedisServerOptions = {}): Promise<RedisServer> => {
  const port = await freePort()
  let child = await launch(port, options)
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: () => exited(child, "SIGKILL"),
    restart: async () => {
      child = await launch(port, options)
    },
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    // A paused server would hold SIGTERM pending: it is let go first.
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGCONT")
      return exited(child, "SIGTERM")
    }
  }
}

/** The commands `otherClients` sends. A connected node-redis client has it. */
export interface RedisObserver {
  sendCommand(args: Array<string>): Promise<unknown>
}

/** How many clients the server has connected besides `observer` (the one asking). */
export const otherClients = async (observer: RedisObserver): Promise<number> => {
  const ownId = String(await observer.sendCommand(["CLIENT", "ID"]))
  const list = String(await observer.sendCommand(["CLIENT", "LIST"]))
  return list.split("\n").filter((line) => line.startsWith("id=") && !line.startsWith(`id=${ownId} `)).length
}
