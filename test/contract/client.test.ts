import { Schema } from "effect"
import { createClient, defineServe, initServe, type RunningServer, ServeClientError, ServeHttpError } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

const { query } = initServe({})

const Row = Schema.Struct({ id: Schema.Number, day: Schema.Date })

const queries = {
  rows: query
    .input(Schema.Struct({ from: Schema.String, ids: Schema.optional(Schema.Array(Schema.Number)), limit: Schema.optional(Schema.Int) }))
    .output(Schema.Array(Row))
    .query(({ input }) => (input.ids ?? [1]).slice(0, input.limit ?? 10).map((id) => ({ id, day: new Date(Date.UTC(2024, 0, id)) }))),
  createNote: query
    .method("POST")
    .input(z.object({ text: z.string().min(1), tags: z.array(z.string()).optional() }))
    .query(({ input }) => ({ id: 7, text: input.text, tags: input.tags ?? [] })),
  removeNote: query.method("DELETE").input(Schema.Struct({ id: Schema.Number })).query(() => undefined),
  whoami: query
    .auth(({ request }) => (request.headers?.["x-api-key"] === "secret" ? { name: "ada" } : null))
    .query(({ ctx }) => ({ name: String(ctx.auth?.name), trace: ctx.request.headers?.["x-trace"] ?? null })),
  conflict: query.query((): string => {
    throw new ServeHttpError(409, "CONFLICT", "The name is taken", { details: { name: "ada" } })
  }),
  ping: query.query(() => "pong"),
  // Served at /api/analytics/leading and /api/analytics/trailing: the server joins paths with one slash.
  "/leading": query.query(() => "leading"),
  "trailing/": query.query(() => "trailing"),
  cached: query.cache(60_000).query(() => ({ version: 1 })),
  echo: query
    .input(z.object({
      text: z.string().optional(),
      count: z.number().optional(),
      flag: z.boolean().optional(),
      since: z.coerce.date().optional(),
      tags: z.array(z.string()).optional(),
      ids: z.array(z.number()).optional(),
      note: z.string().nullable().optional(),
      filter: z.object({ region: z.string() }).optional()
    }))
    .query(({ input }) => input)
}

/** A fetch that records each request's method and URL before passing it on. */
const recordingFetch = () => {
  const seen: Array<string> = []
  const fetchImpl: typeof fetch = (input, init) => {
    seen.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`)
    return fetch(input, init)
  }
  return { seen, fetchImpl }
}

describe("createClient against a server on loopback", () => {
  const api = defineServe({ queries })
  let server: RunningServer
  let baseUrl: string

  beforeAll(async () => {
    server = await api.start({ port: 0, hostname: "127.0.0.1" })
    baseUrl = `${server.url}/api/analytics`
  })
  afterAll(() => server?.stop())

  it("sends GET input as a query string with lists as repeated keys and returns the typed, encoded output", async () => {
    const client = createClient<typeof api>({ baseUrl })
    const rows = await client.rows({ from: "2024-01-01", ids: [3, 4, 5], limit: 2 })
    expect(rows).toEqual([{ id: 3, day: "2024-01-03T00:00:00.000Z" }, { id: 4, day: "2024-01-04T00:00:00.000Z" }])
  })

  it("sends other methods' input as a JSON body, and answers 204 with undefined", async () => {
    const client = createClient<typeof api>({ baseUrl })
    await expect(client.createNote({ text: "hello", tags: ["a"] })).resolves.toEqual({ id: 7, text: "hello", tags: ["a"] })
    await expect(client.removeNote({ id: 7 })).resolves.toBeUndefined()
    await expect(client.ping()).resolves.toBe("pong")
  })

  it("learns each query's method from the OpenAPI document once, or not at all when told", async () => {
    const learning = recordingFetch()
    const client = createClient<typeof api>({ baseUrl, fetch: learning.fetchImpl })
    await client.createNote({ text: "a" })
    await client.removeNote({ id: 1 })
    await client.rows({ from: "x" })
    expect(learning.seen).toEqual([
      "GET /api/analytics/openapi.json",
      "POST /api/analytics/createNote",
      "DELETE /api/analytics/removeNote",
      "GET /api/analytics/rows"
    ])
    const told = recordingFetch()
    const configured = createClient<typeof api>({ baseUrl, fetch: told.fetchImpl, methods: { createNote: "POST", rows: "GET" } })
    await configured.createNote({ text: "b" })
    await configured.rows({ from: "x" })
    expect(told.seen).toEqual(["POST /api/analytics/createNote", "GET /api/analytics/rows"])
  })

  it("asks for a query whose key has a leading or trailing slash at the path the server serves it on", async () => {
    const recording = recordingFetch()
    const client = createClient<typeof api>({ baseUrl, fetch: recording.fetchImpl })
    await expect(client["/leading"]()).resolves.toBe("leading")
    await expect(client["trailing/"]()).resolves.toBe("trailing")
    expect(recording.seen).toEqual(["GET /api/analytics/openapi.json", "GET /api/analytics/leading", "GET /api/analytics/trailing"])
  })

  it("finds the OpenAPI document at an `openapiPath` written without a leading slash", async () => {
    const recording = recordingFetch()
    const client = createClient<typeof api>({ baseUrl, fetch: recording.fetchImpl, openapiPath: "openapi.json" })
    await expect(client.createNote({ text: "a" })).resolves.toMatchObject({ id: 7 })
    expect(recording.seen).toEqual(["GET /api/analytics/openapi.json", "POST /api/analytics/createNote"])
  })

  it("rejects a 304 to the caller's own If-None-Match with a ServeClientError saying the copy is current", async () => {
    const first = await fetch(`${baseUrl}/cached`)
    const etag = first.headers.get("etag")!
    const client = createClient<typeof api>({ baseUrl, methods: { cached: "GET" } })
    const notModified = await client.cached(undefined, { headers: { "if-none-match": etag } }).catch((error: unknown) => error)
    expect(notModified).toBeInstanceOf(ServeClientError)
    expect(notModified).toMatchObject({ status: 304, envelope: undefined, requestId: expect.any(String), message: expect.stringMatching(/^Not Modified/) })
    await expect(client.cached(undefined, { headers: { "if-none-match": "\"other\"" } })).resolves.toEqual({ version: 1 })
  })

  it("throws a ServeClientError carrying the status, the ErrorEnvelope and the request id", async () => {
    const client = createClient<typeof api>({ baseUrl })
    const invalid = await client.createNote({ text: "" }).catch((error: unknown) => error)
    expect(invalid).toBeInstanceOf(ServeClientError)
    const error = invalid as ServeClientError
    expect(error.status).toBe(400)
    expect(error.type).toBe("VALIDATION_ERROR")
    expect(error.envelope?.error.details).toMatchObject({ issues: [{ path: ["text"], message: expect.any(String) }] })
    expect(error.requestId).toMatch(/^[0-9a-f-]{36}$/)
    await expect(client.conflict()).rejects.toMatchObject({
      status: 409,
      message: "The name is taken",
      envelope: { error: { type: "CONFLICT", message: "The name is taken", details: { name: "ada" } } }
    })
  })

  it("sends configured headers (fixed or computed per call) and per-call headers", async () => {
    await expect(createClient<typeof api>({ baseUrl }).whoami()).rejects.toMatchObject({ status: 401, type: "UNAUTHORIZED" })
    const fixed = createClient<typeof api>({ baseUrl, headers: { "x-api-key": "secret" } })
    await expect(fixed.whoami()).resolves.toEqual({ name: "ada", trace: null })
    await expect(fixed.whoami(undefined, { headers: { "x-trace": "t-1" } })).resolves.toEqual({ name: "ada", trace: "t-1" })
    let calls = 0
    const computed = createClient<typeof api>({ baseUrl, headers: async () => ({ "x-api-key": "secret", "x-trace": `call-${++calls}` }) })
    await expect(computed.whoami()).resolves.toEqual({ name: "ada", trace: "call-2" })
  })

  it("reports an error body that is not an envelope as a ServeClientError without one", async () => {
    const proxyError: typeof fetch = async () => new Response("<h1>Bad gateway</h1>", { status: 502 })
    const client = createClient<typeof api>({ baseUrl, fetch: proxyError, methods: { ping: "GET" } })
    await expect(client.ping()).rejects.toMatchObject({ status: 502, envelope: undefined, message: "HTTP 502" })
  })

  it("takes every query not in `methods` as GET, asking once, when the OpenAPI document answers 404", async () => {
    const hidden = defineServe({ openapi: { enabled: false }, queries })
    const hiddenServer = await hidden.start({ port: 0, hostname: "127.0.0.1" })
    try {
      const hiddenUrl = `${hiddenServer.url}/api/analytics`
      const recording = recordingFetch()
      const client = createClient<typeof hidden>({ baseUrl: hiddenUrl, fetch: recording.fetchImpl, methods: { createNote: "POST" } })
      await expect(client.ping()).resolves.toBe("pong")
      await expect(client.rows({ from: "x" })).resolves.toHaveLength(1)
      await expect(client.createNote({ text: "a" })).resolves.toMatchObject({ id: 7 })
      expect(recording.seen).toEqual([
        "GET /api/analytics/openapi.json",
        "GET /api/analytics/ping",
        "GET /api/analytics/rows",
        "POST /api/analytics/createNote"
      ])
      // Not listed, a POST query is asked with GET: the server says which methods it allows.
      await expect(createClient<typeof hidden>({ baseUrl: hiddenUrl }).createNote({ text: "a" })).rejects.toMatchObject({ status: 405 })
    } finally {
      await hiddenServer.stop()
    }
  })

  it("rejects a call whose OpenAPI document fails to load with a ServeClientError naming it, and tries again on the next", async () => {
    let documentRequests = 0
    const unavailableOnce: typeof fetch = async (input, init) =>
      String(input).endsWith("/openapi.json") && documentRequests++ === 0
        ? Response.json({ error: { type: "UNAVAILABLE", message: "Down for maintenance" } }, { status: 503 })
        : fetch(input, init)
    const client = createClient<typeof api>({ baseUrl, fetch: unavailableOnce })
    const failure = await client.createNote({ text: "a" }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ServeClientError)
    expect(failure).toMatchObject({ status: 503, type: "UNAVAILABLE", message: `Loading the OpenAPI document ${baseUrl}/openapi.json failed: Down for maintenance` })
    await expect(client.createNote({ text: "a" })).resolves.toMatchObject({ id: 7 })
    expect(documentRequests).toBe(2)
  })

  it("sends what a query string carries as it is, and refuses, naming the field, what it would change", async () => {
    const recording = recordingFetch()
    const client = createClient<typeof api>({ baseUrl, fetch: recording.fetchImpl, methods: { echo: "GET" } })
    const since = new Date(Date.UTC(2024, 1, 29, 12, 30))
    await expect(client.echo({ text: "a b+c&d=e#f?g/h%20ü 😀", count: -1.5, flag: false, since, tags: ["x y", "a,b"], ids: [3] }))
      .resolves.toEqual({ text: "a b+c&d=e#f?g/h%20ü 😀", count: -1.5, flag: false, since: since.toISOString(), tags: ["x y", "a,b"], ids: [3] })
    await expect(client.echo({ note: "null" })).resolves.toEqual({ note: "null" })
    const refusals: Array<[input: Parameters<typeof client.echo>[0], message: RegExp]> = [
      [{ filter: { region: "eu" } }, /"filter" is an object.*POST query/],
      [{ note: null }, /"note" is null.*leave the field out/],
      [{ ids: [] }, /"ids" is an empty list.*leave the field out/],
      [{ count: Number.NaN }, /"count" is NaN/],
      [{ tags: [["a"]] as never }, /"tags" is a list inside a list/]
    ]
    for (const [input, message] of refusals) {
      const refused = await client.echo(input).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(TypeError)
      expect((refused as TypeError).message).toMatch(message)
    }
    expect(recording.seen).toHaveLength(2)
  })

  it("reports a 2xx answer that is not JSON as a ServeClientError with its status and request id", async () => {
    const loginPage: typeof fetch = async () =>
      new Response("<html>Sign in</html>", { status: 200, headers: { "content-type": "text/html", "x-request-id": "r-1" } })
    const client = createClient<typeof api>({ baseUrl, fetch: loginPage, methods: { ping: "GET" } })
    const failure = await client.ping().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ServeClientError)
    expect(failure).toMatchObject({ status: 200, requestId: "r-1", envelope: undefined, message: expect.stringMatching(/is not JSON: text\/html$/) })
    await expect(createClient<typeof api>({ baseUrl, fetch: loginPage }).ping())
      .rejects.toMatchObject({ status: 200, message: expect.stringMatching(/^The OpenAPI document .* is not JSON/) })
  })

  it("aborts a call's wait for the OpenAPI document with its signal, leaving the load to other calls", async () => {
    let releaseDocument = () => {}
    const documentHeld = new Promise<void>((resolve) => (releaseDocument = resolve))
    const slowDocument: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/openapi.json")) await documentHeld
      return fetch(input, init)
    }
    const client = createClient<typeof api>({ baseUrl, fetch: slowDocument })
    const controller = new AbortController()
    const reason = new Error("gave up")
    const aborted = client.ping(undefined, { signal: controller.signal }).catch((error: unknown) => error)
    const waiting = client.ping()
    controller.abort(reason)
    const stillWaiting = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 200))
    const settled = await Promise.race([aborted, stillWaiting])
    releaseDocument()
    expect(settled).toBe(reason)
    await expect(waiting).resolves.toBe("pong")
  })

  it("is not mistaken for a promise", async () => {
    const client = createClient<typeof api>({ baseUrl })
    expect(await Promise.resolve(client)).toBe(client)
  })
})
