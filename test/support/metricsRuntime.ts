/**
 * Run by Bun, Deno, and Node without prom-client (test/metrics/runtimes.test.ts): an API with metrics
 * on behind the fetch handler, one request, two scrapes; prints the request's status and the scrape's
 * status, content type and body.
 */
import { createFetchHandler, defineServe } from "../../src/index.js"

const api = defineServe({ queries: { hello: () => ({ hello: "world" }) }, metrics: { public: true } })
const fetchHandler = createFetchHandler(api.handler)
const hello = await fetchHandler(new Request("http://localhost/api/analytics/hello"))
// Twice: the second scrape shows the first was not counted, and a failure is reported only once.
await fetchHandler(new Request("http://localhost/api/analytics/metrics"))
const scrape = await fetchHandler(new Request("http://localhost/api/analytics/metrics"))
console.log(JSON.stringify({ helloStatus: hello.status, status: scrape.status, contentType: scrape.headers.get("content-type"), body: await scrape.text() }))
await api.dispose()
// prom-client's default metrics observe the event loop; this program is done.
process.exit(0)
