/**
 * One of several processes hitting one Redis counter at once. Usage: incrementWorker <url> <key> <n> <windowMs>.
 * Prints "ready" once connected, waits for a line on stdin (so every process starts together), fires
 * n concurrent increments, and prints the counts they returned as JSON.
 */
import { once } from "node:events"
import { makeRedisRateLimitStore } from "queryserve"
import { createClient } from "redis"

const [url, key, n, windowMs] = process.argv.slice(2)
if (url === undefined || key === undefined || n === undefined || windowMs === undefined) {
  throw new Error("usage: incrementWorker <url> <key> <n> <windowMs>")
}
const client = createClient({ url })
await client.connect()
const store = makeRedisRateLimitStore({ client })
process.stdout.write("ready\n")
await once(process.stdin, "data")
const counts = await Promise.all(Array.from({ length: Number(n) }, () => store.increment(key, Number(windowMs))))
process.stdout.write(JSON.stringify(counts) + "\n")
await client.close()
process.exit(0)
