/**
 * Run by logging.test.ts in its own process: one request with `queryLogging: 'json'`, then the
 * process ends before the event loop's turn does, by `process.exit` or by an uncaught error
 * (argv[2] `exit` or `throw`). Its log line must still reach stdout.
 */
import { defineServe } from "queryserve"

const api = defineServe({ queryLogging: "json", queries: { ping: () => "pong" } })
await api.handler({ method: "GET", path: "/api/analytics/ping", headers: { "x-request-id": "last-words" } })
if (process.argv[2] === "throw") throw new Error("the process fails right after its request")
process.exit(0)
