import { createClient } from "redis"
import { afterAll, beforeAll } from "vitest"
import { otherClients, type RedisServer, startRedis } from "./redisServer.js"

/** A Redis server and a client of its own, connected: to use, or to look at the connections others keep open. */
export interface ObservedRedis {
  readonly server: () => RedisServer
  readonly client: () => ReturnType<typeof createClient>
  /** How many clients the server has connected besides the observer. */
  readonly otherClients: () => Promise<number>
}

/** A Redis and its client for the enclosing describe block: started before its tests, stopped after. */
export const observedRedis = (): ObservedRedis => {
  let redis: RedisServer | undefined
  let observer: ReturnType<typeof createClient> | undefined
  const started = <A>(value: A | undefined): A => {
    if (value === undefined) throw new Error("the observed Redis is not started yet (use it inside a test)")
    return value
  }
  beforeAll(async () => {
    redis = await startRedis()
    observer = createClient({ url: redis.url })
    await observer.connect()
  })
  afterAll(async () => {
    await observer?.close()
    await redis?.stop()
  })
  return { server: () => started(redis), client: () => started(observer), otherClients: () => otherClients(started(observer)) }
}
