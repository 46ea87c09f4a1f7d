/**
 * A throwaway Postgres for a test: Debian's server binaries, a temporary data directory, a free
 * loopback port, trust auth, no durability (fsync off). Postgres refuses to run as root, so as root
 * the binaries run as the `postgres` system user through `setpriv`, which execs in place: the child's
 * pid is the postmaster's own, and a signal to it stops the server.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { freePort } from "./freePort.js"
import { missing } from "./testBinaries.js"

export interface PostgresServer {
  readonly url: string
  stop(): Promise<void>
}

const POSTGRES_ROOT = "/usr/lib/postgresql"

/** The newest installed server's bin directory, or undefined when there is none. */
export const findPostgresBin = (): string | undefined => {
  if (!existsSync(POSTGRES_ROOT)) return undefined
  const versions = readdirSync(POSTGRES_ROOT)
    .filter((version) => existsSync(join(POSTGRES_ROOT, version, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(POSTGRES_ROOT, versions[0], "bin")
}

/** The server binaries for a suite that starts its own Postgres; missing, the suite skips and says why (in CI it fails). */
export const findPostgresBinForTests = (suite: string): string | undefined =>
  findPostgresBin() ?? missing(`${suite}: no Postgres server binaries under ${POSTGRES_ROOT} (apt-get install postgresql)`)

/** As root, the system user to run Postgres as; otherwise the current user runs it. */
const runAs = (): { readonly uid: number; readonly gid: number } | undefined => {
  if (userInfo().uid !== 0) return undefined
  const [uid, gid] = ["-u", "-g"].map((flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim()))
  return { uid: uid!, gid: gid! }
}

const command = (bin: string, program: string, args: ReadonlyArray<string>, user: ReturnType<typeof runAs>) =>
  user === undefined
    ? { file: join(bin, program), args: [...args] }
    : { file: "setpriv", args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", join(bin, program), ...args] }

const waitUntilAccepting = async (url: string, child: ChildProcess, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}`)
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.end()
      return
    } catch (error) {
      await client.end().catch(() => {})
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

export const startPostgres = async (bin: string): Promise<PostgresServer> => {
  const user = runAs()
  const dir = mkdtempSync(join(tmpdir(), "queryserve-pg-"))
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  const data = join(dir, "data")
  const init = command(bin, "initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], user)
  execFileSync(init.file, init.args, { stdio: "pipe" })
  const port = await freePort()
  const server = command(bin, "postgres", [
    "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"
  ], user)
  const child = spawn(server.file, server.args, { stdio: "ignore" })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const stop = async () => {
    // SIGINT: Postgres' fast shutdown (disconnect clients, then stop).
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT")
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitUntilAccepting(url, child, 20_000)
  } catch (error) {
    await stop()
    throw error
  }
  return { url, stop }
}
