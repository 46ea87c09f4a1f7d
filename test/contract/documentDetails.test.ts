/**
 * What reference pages and generated clients read beyond operations: servers, root security, tags,
 * licence, schema defaults and titles, response headers and 304.
 */
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
    expect(headersOf(operation(document, "cached"))).toEqual(["X-Request-Id", "Cache-Control", "ETag"])
    expect(headersOf(operation(document, "noStore"))).toEqual(["X-Request-Id", "Cache-Control"])
    expect(headersOf(operation(document, "plain"))).toEqual(["X-Request-Id"])
    expect(headersOf(operation(document, "posted", "post"))).toEqual(["X-Request-Id", "Cache-Control", "ETag"])
    for (const [key, method] of [["cached", "get"], ["posted", "post"]] as const) {
      const op = operation(document, key, method)
      expect(op.responses["304"]).toEqual({ $ref: "#/components/responses/NotModified" })
    }
    expect(operation(document, "noStore").responses["304"]).toBeUndefined()
    expect(document.components.responses.NotModified).toEqual({
      description: expect.stringContaining("If-None-Match"),
      headers: {
        ETag: { $ref: "#/components/headers/ETag" },
        "Cache-Control": { $ref: "#/components/headers/CacheControl" },
        "X-Request-Id": { $ref: "#/components/headers/RequestId" }
      }
    })
  })

  it("describes X-RateLimit-* on the answers of rate-limited endpoints, and Retry-After on their 429", async () => {
    const document = await documentOf(api)
    expect(headersOf(operation(document, "limited"))).toEqual(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
    expect(Object.keys((document.components.responses.TooManyRequests as { headers: object }).headers)).toEqual([
      "X-Request-Id", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"
    ])
    expect(Object.keys(document.components.headers)).toEqual([
      "CacheControl", "ETag", "RateLimitLimit", "RateLimitRemaining", "RateLimitReset", "RequestId", "RetryAfter"
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
    const ok = operation(await documentOf(defineServe({ queries: { rows: { outputSchema: Schema.Array(Schema.Number), query: () => [1] } } })), "rows")
      .responses["200"] as { description: string; content: object }
    expect(Object.keys(ok.content)).toEqual(["application/json", "text/csv", "application/x-ndjson"])
    expect(ok.description).toContain("`/api/analytics/rows.csv`")
    expect(ok.description).toContain("`/api/analytics/rows.ndjson`")
  })
})
