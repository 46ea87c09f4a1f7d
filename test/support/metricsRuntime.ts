/**
 * Run by Bun and Deno (test/metrics/runtimes.test.ts): an API with metrics on behind the fetch
 * handler, one request, one scrape; prints the scrape's status, content type and body.
 */
import { createFetchHandler, defineServe } from "../../src/index.js"

const api = defineServe({ queries: { hello: () => ({ hello: "world" }) }, metrics: true })
const fetchHandler = createFetchHandler(api.handler)
await fetchHandler(new Request("http://localhost/api/analytics/hello"))
const scrape = await fetchHandler(new Request("http://localhost/api/analytics/metrics"))
console.log(JSON.stringify({ status: scrape.status, contentType: scrape.headers.get("content-type"), body: await scrape.text() }))
await api.dispose()
// prom-client's default metrics observe the event loop; this program is done.
process.exit(0)
