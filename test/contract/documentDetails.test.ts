/**
 * What reference pages and generated clients read beyond operations: servers, root security, tags,
 * licence, schema defaults and titles, response headers and 304.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { Schema } from "effect"
import { defineServe, type OpenApiDocument, type OpenApiOperation, rateLimit, type RunningServer } from "queryserve"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { bodyOf, get } from "../support/requests.js"

const documentOf = async (api: ReturnType<typeof defineServe>) =>
  bodyOf(await api.handler(get("/api/analytics/openapi.json"))) as OpenApiDocument

const operation = (document: OpenApiDocument, key: string, method = "get"): OpenApiOperation =>
  document.paths[`/api/analytics/${key}`]![method]!

const parameter = (op: OpenApiOperation, name: string) => op.parameters!.find((p) => p.name === name) as { schema: Record<string, unknown> }

describe("servers", () => {
  it("is `/` (where the document came from) until the API listens, then the URL start() listens on", async () => {
    const api = defineServe({ queries: { a: () => 1 } })
    expect((await documentOf(api)).servers).toEqual([{ url: "/" }])
    let server: RunningServer | undefined
    try {
      server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
      const served = (await (await fetch(`${server.url}/api/analytics/openapi.json`)).json()) as OpenApiDocument
      expect(served.servers).toEqual([{ url: `http://127.0.0.1:${server.port}` }])
    } finally {
      await server?.stop()
    }
  })

  it("stays `/` when the server listens on every interface, and follows openapi.servers when given", async () => {
    const wildcard = defineServe({ queries: { a: () => 1 } })
    const server = await wildcard.start({ port: 0, hostname: "0.0.0.0", handleSignals: false })
    try {
      expect((await documentOf(wildcard)).servers).toEqual([{ url: "/" }])
    } finally {
      await server.stop()
    }
    const servers = [{ url: "https://api.example.com", description: "Production" }, { url: "http://localhost:4000" }]
    expect((await documentOf(defineServe({ openapi: { servers }, queries: { a: () => 1 } }))).servers).toEqual(servers)
  })
})

describe("info and tags", () => {
  it("carries the configured licence and contact, and tag descriptions in the configured order, other tags after", async () => {
    const api = defineServe({
      openapi: {
        info: { title: "Sales", license: { name: "Apache 2.0", identifier: "Apache-2.0" }, contact: { name: "Data team", email: "data@example.com" } },
        tags: [{ name: "sales", description: "Money in." }, { name: "admin", description: "Operators only.", externalDocs: { url: "https://example.com/admin" } }]
      },
      queries: {
        a: { tags: ["sales"], query: () => 1 },
        b: { tags: ["zeta", "admin"], query: () => 1 },
        c: { tags: ["alpha"], query: () => 1 }
      }
    })
    const document = await documentOf(api)
    expect(document.info).toEqual({
      title: "Sales",
      version: "1.0.0",
      license: { name: "Apache 2.0", identifier: "Apache-2.0" },
      contact: { name: "Data team", email: "data@example.com" }
    })
    expect(document.tags).toEqual([
      { name: "sales", description: "Money in." },
      { name: "admin", description: "Operators only.", externalDocs: { url: "https://example.com/admin" } },
      { name: "alpha" },
      { name: "zeta" }
    ])
  })
})

describe("schemas as callers read them", () => {
  const Limit = Schema.Number.pipe(Schema.int(), Schema.between(1, 100))
  const api = defineServe({
    queries: {
      effect: {
        inputSchema: Schema.Struct({
          limit: Schema.optionalWith(Limit, { default: () => 10 }),
          scale: Schema.optionalWith(Schema.NumberFromString, { default: () => 2 }),
          unit: Schema.optional(Schema.Literal("eur", "usd")).pipe(Schema.withDecodingDefault(() => "eur" as const)),
          name: Schema.optional(Schema.String.pipe(Schema.minLength(2))),
          count: Schema.optional(Schema.Int),
          size: Schema.optional(Schema.Number.pipe(Schema.positive()).annotations({ title: "Page size" }))
        }),
        query: () => 1
      },
      zod: { method: "POST", inputSchema: z.object({ limit: z.number().int().default(10) }), query: () => 1 }
    }
  })

  it("gives each decoding default as `default`, encoded for the wire", async () => {
    const document = await documentOf(api)
    const op = operation(document, "effect")
    expect(parameter(op, "limit").schema).toEqual({ type: "integer", description: "a number between 1 and 100", minimum: 1, maximum: 100, default: 10 })
    expect(parameter(op, "scale").schema).toMatchObject({ default: "2" })
    expect(parameter(op, "unit").schema).toMatchObject({ enum: ["eur", "usd"], default: "eur" })
    expect(parameter(op, "name").schema).not.toHaveProperty("default")
    expect(operation(document, "zod", "post").requestBody).toMatchObject({
      content: { "application/json": { schema: { properties: { limit: { type: "integer", default: 10 } } } } }
    })
  })

  it("has no titles that are Effect's names of its refinements; titles written for people stay", async () => {
    const document = await documentOf(api)
    const text = JSON.stringify(document)
    for (const internal of ["between(1, 100)", "\"int\"", "minLength(2)", "greaterThan(0)", "\"positive\""]) expect(text).not.toContain(internal)
    expect(text).not.toContain("\"title\":\"int")
    expect(parameter(operation(document, "effect"), "size").schema).toMatchObject({ title: "Page size", exclusiveMinimum: 0 })
    expect(document.components.schemas.Int).toEqual({ type: "integer", description: "an integer" })
  })
})

describe("response headers and 304", () => {
  const limited = rateLimit({ max: 5 })
  const api = defineServe({
    auth: () => ({ id: "u" }),
    queries: {
      cached: { cacheTtlMs: 60_000, query: () => [1] },
      noStore: { cacheTtlMs: 0, query: () => 1 },
      plain: { query: () => 1 },
      limited: { middlewares: [limited], query: () => 1 },
      posted: { method: "POST", cacheTtlMs: 5_000, query: () => 1 }
    }
  })

  const headersOf = (op: OpenApiOperation) => Object.keys((op.responses["200"] as { headers: object }).headers)

  it("describes X-Request-Id everywhere, Cache-Control where a TTL is set, ETag and 304 where answers are cached", async () => {
    const document = await documentOf(api)
    expect(headersOf(operation(document, "cached"))).toEqual(["X-Request-Id", "Cache-Control", "ETag", "Vary"])
    expect(headersOf(operation(document, "noStore"))).toEqual(["X-Request-Id", "Cache-Control", "Vary"])
    expect(headersOf(operation(document, "plain"))).toEqual(["X-Request-Id", "Vary"])
    expect(headersOf(operation(document, "posted", "post"))).toEqual(["X-Request-Id", "Cache-Control", "ETag", "Vary"])
    for (const [key, method] of [["cached", "get"], ["posted", "post"]] as const) {
      const op = operation(document, key, method)
      expect(op.responses["304"]).toEqual({ $ref: "#/components/responses/NotModified" })
    }
    expect(operation(document, "noStore").responses["304"]).toBeUndefined()
    expect(document.components.responses.NotModified).toEqual({
      description: expect.stringContaining("If-None-Match"),
      headers: {
        "X-Request-Id": { $ref: "#/components/headers/RequestId" },
        "Cache-Control": { $ref: "#/components/headers/CacheControl" },
        ETag: { $ref: "#/components/headers/ETag" },
        Vary: { $ref: "#/components/headers/Vary" }
      }
    })
  })

  it("describes X-RateLimit-* on the answers of rate-limited endpoints, and Retry-After on their 429", async () => {
    const document = await documentOf(api)
    expect(headersOf(operation(document, "limited"))).toEqual(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Vary"])
    expect(Object.keys((document.components.responses.TooManyRequests as { headers: object }).headers)).toEqual([
      "X-Request-Id", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Vary"
    ])
    expect(Object.keys(document.components.headers)).toEqual([
      "CacheControl", "ETag", "RateLimitLimit", "RateLimitRemaining", "RateLimitReset", "RequestId", "RetryAfter", "Vary"
    ])
  })

  it("documents what the server really sends", async () => {
    const cached = await api.handler(get("/api/analytics/cached"))
    expect(Object.keys(cached.headers)).toEqual(expect.arrayContaining(["x-request-id", "cache-control", "etag"]))
    const revalidated = await api.handler(get("/api/analytics/cached", {}, { "if-none-match": cached.headers.etag! }))
    expect(revalidated.status).toBe(304)
    const limitedAnswer = await api.handler(get("/api/analytics/limited"))
    expect(Object.keys(limitedAnswer.headers)).toEqual(expect.arrayContaining(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]))
    expect((await api.handler(get("/api/analytics/plain"))).headers["cache-control"]).toBeUndefined()
  })

  it("names the .csv and .ndjson routes of a GET list endpoint beside its text/csv and NDJSON media types", async () => {
    const rows = Schema.Array(Schema.Struct({ id: Schema.Number }))
    const ok = operation(await documentOf(defineServe({ queries: { rows: { outputSchema: rows, query: () => [{ id: 1 }] } } })), "rows")
      .responses["200"] as { description: string; content: object }
    expect(Object.keys(ok.content)).toEqual(["application/json", "text/csv", "application/x-ndjson"])
    expect(ok.description).toContain("`/api/analytics/rows.csv`")
    expect(ok.description).toContain("`/api/analytics/rows.ndjson`")
  })
})

/** A response of an operation, its `$ref` to `components.responses` followed. */
type ResponseObject = { readonly $ref?: string; readonly headers?: object; readonly content?: object }

const responseOf = (document: OpenApiDocument, op: OpenApiOperation, status: number): ResponseObject | undefined => {
  const response = op.responses[String(status)] as ResponseObject | undefined
  if (response?.$ref === undefined) return response
  return document.components.responses[response.$ref.slice("#/components/responses/".length)] as ResponseObject
}

// The response headers queryserve itself sets; adapters add framing headers (Content-Length, Date) of their own.
const SET_BY_QUERYSERVE = [
  "x-request-id", "cache-control", "etag", "vary", "x-cache", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"
]

/** The headers an answer carries that its documented response does not list. */
const undocumentedHeaders = (document: OpenApiDocument, op: OpenApiOperation, answer: { status: number; headers: Record<string, string> }) => {
  const documented = new Set(Object.keys(responseOf(document, op, answer.status)?.headers ?? {}).map((name) => name.toLowerCase()))
  return SET_BY_QUERYSERVE.filter((name) => answer.headers[name] !== undefined && !documented.has(name))
}

describe("headers on every answer that carries them", () => {
  let fail = false
  const api = defineServe({
    resultCache: true,
    cors: { origin: ["https://app.test"] },
    queries: {
      limited: {
        middlewares: [rateLimit({ max: 1_000 })],
        cacheTtlMs: 60_000,
        inputSchema: Schema.Struct({ n: Schema.optional(Schema.NumberFromString) }),
        query: ({ input }: { input: { n?: number } }) => {
          if (fail) throw new Error("boom")
          return { n: input.n ?? 1 }
        }
      },
      cached: { cacheTtlMs: 60_000, query: () => ({ n: 1 }) },
      plain: () => 1
    }
  })
  const origin = { origin: "https://app.test" }

  it("documents X-RateLimit-*, X-Cache and Vary on 200, 304, 406 and the handler's 500 where the server sends them", async () => {
    const document = await documentOf(api)
    const limited = operation(document, "limited")
    const ok = await api.handler(get("/api/analytics/limited", { n: "2" }, origin))
    const notModified = await api.handler(get("/api/analytics/limited", { n: "2" }, { ...origin, "if-none-match": ok.headers.etag! }))
    const notAcceptable = await api.handler(get("/api/analytics/limited", { n: "2" }, { ...origin, accept: "text/csv" }))
    fail = true
    const failed = await api.handler(get("/api/analytics/limited", { n: "3" }, origin))
    fail = false
    expect([ok.status, notModified.status, notAcceptable.status, failed.status]).toEqual([200, 304, 406, 500])
    for (const answer of [ok, notModified, notAcceptable, failed]) {
      expect(answer.headers).toMatchObject({ "x-ratelimit-limit": "1000", "x-cache": expect.any(String), vary: expect.stringContaining("Origin") })
      expect(undocumentedHeaders(document, limited, answer)).toEqual([])
    }
    const invalid = await api.handler(get("/api/analytics/limited", { n: "x" }, origin))
    expect(invalid.status).toBe(400)
    expect(undocumentedHeaders(document, limited, invalid)).toEqual([])
    const plain = await api.handler(get("/api/analytics/plain", {}, origin))
    expect(undocumentedHeaders(document, operation(document, "plain"), plain)).toEqual([])
  })

  it("gives a 304 with headers of its own its own response, of shared header components; NotModified only when referred to", async () => {
    const document = await documentOf(api)
    const own = (key: string) => operation(document, key).responses["304"] as { description: string; headers: Record<string, { $ref: string }> }
    expect(Object.keys(own("limited").headers)).toEqual([
      "X-Request-Id", "X-Cache", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Cache-Control", "ETag", "Vary"
    ])
    // The result cache serves every endpoint with a TTL here: each 304 carries X-Cache.
    expect(Object.keys(own("cached").headers)).toEqual(["X-Request-Id", "X-Cache", "Cache-Control", "ETag", "Vary"])
    expect(own("cached").description).toContain("If-None-Match")
    expect(Object.values(own("limited").headers).every((header) => header.$ref.startsWith("#/components/headers/"))).toBe(true)
    expect(document.components.responses.NotModified).toBeUndefined()
    expect(document.components.headers.Vary).toMatchObject({ description: expect.stringContaining("Origin"), schema: { type: "string" } })
  })
})

describe("CSV and NDJSON", () => {
  const Flat = Schema.Struct({
    id: Schema.Number,
    day: Schema.Date,
    region: Schema.NullOr(Schema.Literal("eu", "us")),
    open: Schema.Boolean,
    note: Schema.optional(Schema.Union(Schema.String, Schema.Int))
  })
  const flat = { id: 1, day: new Date(0), region: null, open: true }
  const api = defineServe({
    queries: {
      rows: { outputSchema: Schema.Array(Flat), query: () => [flat] },
      rowsByPost: { method: "POST", outputSchema: Schema.Array(Flat), query: () => [flat] },
      numbers: { outputSchema: Schema.Array(Schema.Number), query: () => [1, 2] },
      nested: { outputSchema: Schema.Array(Schema.Struct({ id: Schema.Number, tags: Schema.Array(Schema.String) })), query: () => [{ id: 1, tags: ["a"] }] },
      one: { outputSchema: Flat, query: () => flat }
    }
  })
  const FORMATS = ["text/csv", "application/x-ndjson"]

  it("offers each format exactly where the server answers in it: CSV for lists of flat rows, NDJSON for lists", async () => {
    const document = await documentOf(api)
    const offered = (key: string, method = "get") => Object.keys((operation(document, key, method).responses["200"] as { content: object }).content)
    expect(offered("rows")).toEqual(["application/json", ...FORMATS])
    expect(offered("rowsByPost", "post")).toEqual(["application/json", ...FORMATS])
    expect(offered("numbers")).toEqual(["application/json", "application/x-ndjson"])
    expect(offered("nested")).toEqual(["application/json", "application/x-ndjson"])
    expect(offered("one")).toEqual(["application/json"])
    for (const key of ["rows", "numbers", "nested", "one"]) {
      for (const accept of FORMATS) {
        const answer = await api.handler(get(`/api/analytics/${key}`, {}, { accept }))
        expect([key, accept, answer.status]).toEqual([key, accept, offered(key).includes(accept) ? 200 : 406])
      }
    }
  })

  it("names only the suffix routes that answer 200", async () => {
    const document = await documentOf(api)
    const description = (key: string) => (operation(document, key).responses["200"] as { description: string }).description
    expect(description("rows")).toContain("`/api/analytics/rows.csv`")
    expect(description("numbers")).toContain("`/api/analytics/numbers.ndjson`")
    expect(description("numbers")).not.toContain(".csv")
    expect(description("one")).not.toMatch(/\.csv|\.ndjson/)
    expect((await api.handler(get("/api/analytics/numbers.csv"))).status).toBe(406)
    expect((await api.handler(get("/api/analytics/numbers.ndjson"))).status).toBe(200)
  })

  it("says of an output without a schema that it may be CSV or NDJSON, when the value allows, else 406", async () => {
    const untyped = defineServe({ queries: { rows: () => [{ a: 1, b: "x" }], numbers: () => [1], one: () => ({ a: 1 }) } })
    const document = await documentOf(untyped)
    for (const key of ["rows", "numbers", "one"]) {
      const ok = operation(document, key).responses["200"] as { description: string; content: object }
      expect(Object.keys(ok.content)).toEqual(["application/json", ...FORMATS])
      expect(ok.description).toMatch(/`\/api\/analytics\/\w+\.csv`.*406/)
      expect(operation(document, key).responses["406"]).toEqual({ $ref: "#/components/responses/NotAcceptable" })
    }
    expect((await untyped.handler(get("/api/analytics/rows", {}, { accept: "text/csv" }))).status).toBe(200)
    expect((await untyped.handler(get("/api/analytics/rows.csv"))).headers["content-type"]).toContain("text/csv")
    expect((await untyped.handler(get("/api/analytics/numbers.csv"))).status).toBe(406)
    expect((await untyped.handler(get("/api/analytics/one.ndjson"))).status).toBe(406)
  })
})

describe("answers without a body", () => {
  const api = defineServe({
    queries: {
      effectVoid: { outputSchema: Schema.Void, query: () => undefined },
      effectUndefined: { method: "POST", outputSchema: Schema.Undefined, query: () => undefined },
      untyped: { method: "DELETE", query: () => undefined },
      typed: { outputSchema: Schema.Number, query: () => 1 }
    }
  })

  it("lists 204 instead of 200 for an output of nothing, beside 200 for one it cannot describe, and never for a typed one", async () => {
    const document = await documentOf(api)
    const successes = (key: string, method = "get") =>
      Object.keys(operation(document, key, method).responses).filter((status) => status.startsWith("2"))
    expect(successes("effectVoid")).toEqual(["204"])
    expect(successes("effectUndefined", "post")).toEqual(["204"])
    expect(successes("untyped", "delete")).toEqual(["200", "204"])
    expect(successes("typed")).toEqual(["200"])
    expect(responseOf(document, operation(document, "effectVoid"), 204)).toEqual({
      description: expect.stringContaining("No content"),
      headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" }, Vary: { $ref: "#/components/headers/Vary" } }
    })
    expect((await api.handler(get("/api/analytics/effectVoid"))).status).toBe(204)
    expect((await api.handler({ method: "POST", path: "/api/analytics/effectUndefined", query: {}, headers: {} })).status).toBe(204)
    expect((await api.handler({ method: "DELETE", path: "/api/analytics/untyped", query: {}, headers: {} })).status).toBe(204)
  })
})

describe("paths of keys with characters URLs and OpenAPI give a meaning", () => {
  it("percent-encodes {, }, ?, # and %: the document is valid and each path, requested as written, answers 200", async () => {
    const keys = ["user{id}", "a?b", "a#b", "100%", "plain"]
    const api = defineServe({ queries: Object.fromEntries(keys.map((key) => [key, () => key])) })
    const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
    try {
      const document = (await (await fetch(`${server.url}/api/analytics/openapi.json`)).json()) as OpenApiDocument
      const paths = Object.keys(document.paths)
      expect(paths).toEqual(["/api/analytics/user%7Bid%7D", "/api/analytics/a%3Fb", "/api/analytics/a%23b", "/api/analytics/100%25", "/api/analytics/plain"])
      for (const [index, path] of paths.entries()) {
        const answer = await fetch(`${document.servers[0]!.url}${path}`)
        expect([path, answer.status, await answer.json()]).toEqual([path, 200, keys[index]])
      }
      const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>)
      expect(result.valid).toBe(true)
    } finally {
      await server.stop()
    }
  })
})

describe("record inputs in a query string", () => {
  const api = defineServe({
    queries: {
      totals: { inputSchema: Schema.Record({ key: Schema.String, value: Schema.Number }), query: ({ input }: { input: Record<string, number> }) => input },
      mixed: {
        inputSchema: Schema.Struct({ params: Schema.String }, Schema.Record({ key: Schema.TemplateLiteral("n_", Schema.String), value: Schema.Number })),
        query: ({ input }: { input: Record<string, unknown> }) => input
      }
    }
  })

  it("documents the keys a record takes as one exploded form parameter, and the server reads them so", async () => {
    const document = await documentOf(api)
    expect((await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>)).valid).toBe(true)
    expect(operation(document, "totals").parameters).toEqual([expect.objectContaining({
      name: "params",
      in: "query",
      required: false,
      style: "form",
      explode: true,
      schema: { type: "object", additionalProperties: { type: "number" } }
    })])
    // A record part beside named keys: its parameter takes a name none of them has.
    const mixed = operation(document, "mixed").parameters!
    expect(mixed.map((p) => p.name)).toEqual(["params", "params_"])
    // Effect writes a template-literal key as `propertyNames` with a pattern, and the values under the pattern "".
    expect(mixed[1]).toMatchObject({ style: "form", explode: true, schema: { type: "object", patternProperties: { "": { type: "number" } } } })
    // As the document says: one pair per key, and the parameter's own name never sent.
    expect(bodyOf(await api.handler(get("/api/analytics/totals", { a: "1", b: "2.5" })))).toEqual({ a: 1, b: 2.5 })
  })
})
