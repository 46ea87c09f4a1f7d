/** A ClickHouse database to test `@clickhouse/client` against: the HTTP front over chDB in a fresh directory. */
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from "@clickhouse/client"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type ChdbHttp, startChdbHttp } from "./chdbHttp.js"

/** The client logs every failed request; the tests look at the failures themselves. */
export const QUIET = { log: { level: ClickHouseLogLevel.OFF } }

export interface ChdbDatabase {
  /** chDB's data directory: a second front may open it after the first stopped. */
  readonly directory: string
  readonly front: ChdbHttp
  /** A quiet client whose queries run in the database. */
  readonly client: ClickHouseClient
  /** Closes the client, stops the front and removes the directory. */
  close(): Promise<void>
}

/** A front over a new chDB directory holding an empty `database`, and a client to it. */
export const startChdbDatabase = async (database: string): Promise<ChdbDatabase> => {
  const directory = mkdtempSync(join(tmpdir(), "queryserve-chdb-"))
  const front = await startChdbHttp(directory)
  const setup = createClient({ url: front.url, ...QUIET })
  await setup.command({ query: `CREATE DATABASE ${database}` })
  await setup.close()
  const client = createClient({ url: front.url, database, ...QUIET })
  return {
    directory,
    front,
    client,
    close: async () => {
      await client.close()
      await front.stop()
      rmSync(directory, { recursive: true, force: true })
    }
  }
}
