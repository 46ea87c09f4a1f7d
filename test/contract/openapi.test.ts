import { Validator } from "@seriousme/openapi-schema-validator"
import { type } from "arktype"
import { Schema } from "effect"
import {
  type AuthStrategy,
  buildOpenApiDocument,
  defineServe,
  type DocumentedMiddleware,
  initServe,
  type OpenApiDocument,
  type OpenApiOperation,
  type ServeQueryEntry,
  withSecurityScheme
} from "queryserve"
import * as v from "valibot"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { bodyOf, get } from "../support/requests.js"

const documentOf = async (api: { handler: ReturnType<typeof defineServe>["handler"] }, path = "/api/analytics/openapi.json") => {
  const response = await api.handler(get(path))
  expect(response.status).toBe(200)
  expect(response.headers["content-type"]).toBe("application/json; charset=utf-8")
  return bodyOf(response) as OpenApiDocument
}

const operation = (document: OpenApiDocument, path: string, method: string): OpenApiOperation => {
  const found = document.paths[path]?.[method]
  if (found === undefined) throw new Error(`no ${method} ${path} in the document`)
  return found
}

const apiKey = withSecurityScheme(
  ({ request }) => (request.headers?.["x-api-key"] === "k" ? { roles: ["analyst"], scopes: ["read"], tenantId: "acme" } : null),
  { type: "apiKey", in: "header", name: "x-api-key" }
)
const undocumented: AuthStrategy = () => null
const rateLimited: DocumentedMiddleware = Object.assign((_ctx: unknown, next: () => unknown) => next(), { errorStatuses: [429] })

const Region = Schema.Literal("eu", "us", "apac").annotations({ identifier: "Region" })
const Row = Schema.Struct({ day: Schema.Date, region: Region, total: Schema.Number }).annotations({ identifier: "Row" })

/** Many endpoints over every schema library, method, auth shape and metadata the document has to express. */
const manyEndpoints = () => {
  const { query } = initServe({})
  const queries: Record<string, ServeQueryEntry> = {}
  const libraries = {
    effect: Schema.Struct({ from: Schema.String, limit: Schema.optional(Schema.Int), regions: Schema.optional(Schema.Array(Region)) }),
    zod: z.object({ from: z.string(), limit: z.number().int().optional(), regions: z.array(z.enum(["eu", "us"])).optional() }),
    arktype: type({ from: "string", "limit?": "number.integer" }),
    valibot: v.object({ from: v.string() })
  }
  const methods = ["GET", "POST", "DELETE", "PUT", "PATCH"] as const
  let n = 0
  for (const [library, input] of Object.entries(libraries)) {
    for (const method of methods) {
      for (const variant of ["public", "auth", "role"] as const) {
        const base = query.input(input).method(method).tag(library).tag(`${method.toLowerCase()}s`)
        const shaped = variant === "public" ? base.public() : variant === "role" ? base.requireRole("admin") : base
        queries[`${library}_${method.toLowerCase()}_${variant}`] = shaped
          .output(n++ % 2 === 0 ? Schema.Array(Row) : Schema.Struct({ count: Schema.Number }))
          .summary(`${library} ${method} ${variant}`)
          .describe(`Endpoint ${n} of the many-endpoint API.`)
          .use(rateLimited)
          .query(() => [])
      }
    }
  }
  return defineServe({
    auth: apiKey,
    openapi: { info: { title: "Many endpoints", version: "2.3.4", description: "Every shape at once." } },
    queries
  })
}

describe("the OpenAPI 3.1 document", () => {
  it("of a many-endpoint API passes an independent OpenAPI 3.1 validator", async () => {
    const api = manyEndpoints()
    api.route("/legacy/effect-get", "effect_get_public").route("/legacy/effect-get-post", "effect_get_public", { method: "POST" })
    const document = await documentOf(api)
    expect(Object.keys(document.paths)).toHaveLength(62)
    const validator = new Validator()
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("is deterministic: the same definitions give the same bytes, top-level keys in a fixed order", async () => {
    const first = (await manyEndpoints().handler(get("/api/analytics/openapi.json"))).body
    const second = (await manyEndpoints().handler(get("/api/analytics/openapi.json"))).body
    expect(first).toBe(second)
    const document = JSON.parse(first!) as OpenApiDocument
    expect(Object.keys(document)).toEqual(["openapi", "info", "servers", "security", "tags", "paths", "components"])
    expect(document.openapi).toBe("3.1.0")
    expect(Object.keys(document.components.schemas)).toEqual([...Object.keys(document.components.schemas)].sort())
    expect(document.tags!.map((tag) => tag.name)).toEqual(["arktype", "deletes", "effect", "gets", "patchs", "posts", "puts", "valibot", "zod"])
  })

  it("names each operation by its query key; extra routes get key_method, all unique", async () => {
    const api = defineServe({ queries: { revenue: () => 1 } })
    api.route("/v2/revenue", "revenue").route("/revenue", "revenue", { method: "POST" }).route("/v3/revenue", "revenue")
    const document = await documentOf(api)
    expect(operation(document, "/api/analytics/revenue", "get").operationId).toBe("revenue")
    expect(operation(document, "/api/analytics/v2/revenue", "get").operationId).toBe("revenue_get")
    expect(operation(document, "/api/analytics/revenue", "post").operationId).toBe("revenue_post")
    expect(operation(document, "/api/analytics/v3/revenue", "get").operationId).toBe("revenue_get_2")
    expect(Object.keys(document.paths["/api/analytics/revenue"]!)).toEqual(["get", "post"])
  })

  it("documents GET, HEAD and DELETE inputs as query parameters, lists as exploded form parameters", async () => {
    const input = Schema.Struct({
      from: Schema.String.annotations({ description: "First day, inclusive" }),
      limit: Schema.optional(Schema.Int),
      ids: Schema.optional(Schema.Array(Schema.Number))
    })
    const api = defineServe({
      queries: { rows: { inputSchema: input, query: () => [] }, purge: { method: "DELETE", inputSchema: input, query: () => 0 } }
    })
    const document = await documentOf(api)
    for (const [path, method] of [["/api/analytics/rows", "get"], ["/api/analytics/purge", "delete"]] as const) {
      const found = operation(document, path, method)
      expect(found.requestBody).toBeUndefined()
      expect(found.parameters).toEqual([
        { name: "from", in: "query", required: true, description: "First day, inclusive", schema: { type: "string", description: "First day, inclusive" } },
        { name: "limit", in: "query", required: false, schema: { $ref: "#/components/schemas/Int" } },
        { name: "ids", in: "query", required: false, style: "form", explode: true, schema: { type: "array", items: { type: "number" } } }
      ])
    }
    expect(document.components.schemas.Int).toMatchObject({ type: "integer" })
  })

  it("documents other methods' inputs as a JSON request body", async () => {
    const api = defineServe({
      queries: {
        create: { method: "POST", inputSchema: z.object({ name: z.string(), note: z.string().optional() }), query: () => 1 },
        patch: { method: "PATCH", inputSchema: z.object({ note: z.string().optional() }), query: () => 1 },
        anything: { method: "PUT", query: () => 1 }
      }
    })
    const document = await documentOf(api)
    expect(operation(document, "/api/analytics/create", "post").requestBody).toEqual({
      required: true,
      content: {
        "application/json": {
          schema: { type: "object", properties: { name: { type: "string" }, note: { type: "string" } }, required: ["name"] }
        }
      }
    })
    expect(operation(document, "/api/analytics/patch", "patch").requestBody).toMatchObject({ required: false })
    expect(operation(document, "/api/analytics/anything", "put").requestBody).toEqual({ required: false, content: { "application/json": { schema: {} } } })
    expect(operation(document, "/api/analytics/create", "post").parameters).toBeUndefined()
  })

  // Accept negotiates CSV and NDJSON for every method; only GET routes also answer at path.csv and path.ndjson.
  it("takes the 200 response from outputSchema; lists also offer CSV and NDJSON, whatever the method", async () => {
    const api = defineServe({
      queries: {
        rows: { outputSchema: Schema.Array(Row), query: () => [] },
        rowsByPost: { method: "POST", outputSchema: Schema.Array(Row), query: () => [] },
        one: { outputSchema: Row, query: () => ({ day: new Date(), region: "eu", total: 1 }) },
        untyped: () => 1
      }
    })
    const document = await documentOf(api)
    const ok = (path: string, method = "get") =>
      operation(document, path, method).responses["200"] as { description: string; content: Record<string, { schema: unknown }> }
    expect(Object.keys(ok("/api/analytics/rows").content)).toEqual(["application/json", "text/csv", "application/x-ndjson"])
    expect(ok("/api/analytics/rows").content["application/json"]!.schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/Row" } })
    expect(Object.keys(ok("/api/analytics/rowsByPost", "post").content)).toEqual(["application/json", "text/csv", "application/x-ndjson"])
    expect(ok("/api/analytics/rows").description).toContain("/api/analytics/rows.csv")
    expect(ok("/api/analytics/rowsByPost", "post").description).not.toContain(".csv")
    expect(ok("/api/analytics/one").content["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/Row" })
    expect(ok("/api/analytics/untyped").content["application/json"]!.schema).toEqual({})
    expect(document.components.schemas.Row).toMatchObject({
      properties: { day: { $ref: "#/components/schemas/Date" }, region: { $ref: "#/components/schemas/Region" }, total: { type: "number" } }
    })
    expect(document.components.schemas.Region).toEqual({ type: "string", enum: ["eu", "us", "apac"] })
  })

  it("lists the error responses each endpoint can give, all through one ErrorEnvelope component", async () => {
    const api = defineServe({
      auth: apiKey,
      tenant: { extract: (auth) => auth?.tenantId },
      queries: {
        open: { auth: null, query: () => 1 },
        filtered: { auth: null, inputSchema: Schema.Struct({ q: Schema.String }), query: () => 1 },
        guarded: { requiredScopes: ["read"], query: () => 1 },
        limited: { auth: null, tenant: false, method: "POST", middlewares: [rateLimited], query: () => 1 }
      }
    })
    const document = await documentOf(api)
    const statuses = (path: string, method = "get") => Object.keys(operation(document, path, method).responses)
    // Without an output schema, the handler may return nothing: 204.
    expect(statuses("/api/analytics/open")).toEqual(["200", "204", "406", "500", "503", "504"])
    expect(operation(document, "/api/analytics/open", "get").security).toEqual([])
    expect(statuses("/api/analytics/filtered")).toEqual(["200", "204", "400", "406", "500", "503", "504"])
    expect(statuses("/api/analytics/guarded")).toEqual(["200", "204", "401", "403", "406", "500", "503", "504"])
    expect(statuses("/api/analytics/limited", "post")).toEqual(["200", "204", "400", "406", "413", "429", "500", "503", "504"])
    expect(operation(document, "/api/analytics/guarded", "get").responses["403"]).toEqual({ $ref: "#/components/responses/Forbidden" })
    expect(Object.keys(document.components.responses)).toEqual([
      "NoContent", "BadRequest", "Unauthorized", "Forbidden", "NotAcceptable", "PayloadTooLarge", "TooManyRequests", "InternalServerError", "ServiceUnavailable",
      "GatewayTimeout"
    ])
    for (const [name, response] of Object.entries(document.components.responses)) {
      if (name === "NoContent") continue
      expect(response).toMatchObject({ content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } })
    }
    expect(document.components.responses.TooManyRequests).toMatchObject({ headers: { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } })
    expect(document.components.headers.RetryAfter).toMatchObject({ schema: { type: "integer" } })
    expect(document.components.schemas.ErrorEnvelope).toMatchObject({ required: ["error"], properties: { error: { required: ["type", "message"] } } })
  })

  it("derives security schemes from the strategies and marks only the operations that require auth", async () => {
    const bearer = withSecurityScheme(() => null, { type: "http", scheme: "bearer", bearerFormat: "JWT" })
    const oauth = withSecurityScheme(() => null, {
      type: "oauth2",
      flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { read: "Read" } } }
    })
    const otherKey = withSecurityScheme(() => null, { type: "apiKey", in: "query", name: "key" })
    const api = defineServe({
      auth: [apiKey, bearer],
      queries: {
        open: { requiresAuth: false, query: () => 1 },
        closed: { query: () => 1 },
        scoped: { auth: oauth, requiredScopes: ["read"], query: () => 1 },
        custom: { auth: [undocumented, otherKey], query: () => 1 }
      }
    })
    const document = await documentOf(api)
    // Every endpoint that needs auth takes the global strategies: the document requires them at its root.
    expect(document.security).toEqual([{ apiKeyAuth: [] }, { bearerAuth: [] }])
    expect(operation(document, "/api/analytics/open", "get").security).toEqual([])
    expect(operation(document, "/api/analytics/closed", "get").security).toEqual([{ apiKeyAuth: [] }, { bearerAuth: [] }])
    expect(operation(document, "/api/analytics/scoped", "get").security).toEqual([{ oauth2: ["read"] }, { apiKeyAuth: [] }, { bearerAuth: [] }])
    expect(operation(document, "/api/analytics/custom", "get").security).toEqual([
      { bearerAuth_2: [] }, { apiKeyAuth_2: [] }, { apiKeyAuth: [] }, { bearerAuth: [] }
    ])
    expect(document.components.securitySchemes).toEqual({
      apiKeyAuth: { type: "apiKey", in: "header", name: "x-api-key" },
      apiKeyAuth_2: { type: "apiKey", in: "query", name: "key" },
      bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      bearerAuth_2: { type: "http", scheme: "bearer", description: expect.stringContaining("custom authentication strategy") },
      oauth2: { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { read: "Read" } } } }
    })
  })

  it("reflects strategies added later with useAuth", async () => {
    const api = defineServe({ queries: { revenue: () => 1, health: { requiresAuth: false, query: () => "ok" } } })
    const before = await documentOf(api)
    expect(before.security).toBeUndefined()
    expect(operation(before, "/api/analytics/revenue", "get").security).toBeUndefined()
    expect(operation(before, "/api/analytics/health", "get").security).toBeUndefined()
    api.useAuth(apiKey)
    const document = await documentOf(api)
    expect(document.security).toEqual([{ apiKeyAuth: [] }])
    expect(operation(document, "/api/analytics/revenue", "get").security).toEqual([{ apiKeyAuth: [] }])
    expect(operation(document, "/api/analytics/health", "get").security).toEqual([])
    expect(Object.keys(operation(document, "/api/analytics/revenue", "get").responses)).toContain("401")
  })

  it("carries name, summary, description and tags", async () => {
    const api = defineServe({
      queries: {
        revenue: { name: "Revenue", summary: "Revenue per day", description: "Sums **orders**.", tags: ["sales", "finance"], query: () => 1 },
        churn: { name: "Churn rate", query: () => 1 },
        plain: () => 1
      }
    })
    const document = await documentOf(api)
    expect(operation(document, "/api/analytics/revenue", "get")).toMatchObject({
      summary: "Revenue per day",
      description: "Sums **orders**.",
      tags: ["sales", "finance"]
    })
    expect(operation(document, "/api/analytics/churn", "get").summary).toBe("Churn rate")
    expect(operation(document, "/api/analytics/plain", "get")).toMatchObject({ summary: "plain" })
    expect(operation(document, "/api/analytics/plain", "get").tags).toBeUndefined()
    expect(document.tags).toEqual([{ name: "finance" }, { name: "sales" }])
  })

  it("takes info.title and info.version, or the variant with version and title on the options", async () => {
    const nested = await documentOf(defineServe({ openapi: { info: { title: "Sales", version: "3.0.1" } }, queries: { a: () => 1 } }))
    expect(nested.info).toEqual({ title: "Sales", version: "3.0.1" })
    const flat = await documentOf(defineServe({ openapi: { title: "Flat", version: "9.9.9" }, queries: { a: () => 1 } }))
    expect(flat.info).toEqual({ title: "Flat", version: "9.9.9" })
    const defaults = await documentOf(defineServe({ queries: { a: () => 1 } }))
    expect(defaults.info).toEqual({ title: "queryserve API", version: "1.0.0" })
  })

  it("is served at basePath + openapi.path, leaves the docs and OpenAPI routes out, and is gone when disabled", async () => {
    const api = defineServe({ basePath: "/v1", openapi: { path: "/spec.json" }, queries: { a: () => 1 } })
    const document = await documentOf(api, "/v1/spec.json")
    expect(Object.keys(document.paths)).toEqual(["/v1/a"])
    expect((await api.handler(get("/api/analytics/openapi.json"))).status).toBe(404)
    const disabled = defineServe({ openapi: { enabled: false }, queries: { a: () => 1 } })
    expect((await disabled.handler(get("/api/analytics/openapi.json"))).status).toBe(404)
    expect((await disabled.handler(get("/api/analytics/docs"))).status).toBe(404)
    expect((await disabled.handler(get("/api/analytics/a"))).status).toBe(200)
  })

  it("answers If-None-Match with 304 and is rebuilt after the definition changes", async () => {
    const api = defineServe({ queries: { a: () => 1 } })
    const first = await api.handler(get("/api/analytics/openapi.json"))
    const etag = first.headers.etag!
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await api.handler(get("/api/analytics/openapi.json", {}, { "if-none-match": etag }))
    expect(again.status).toBe(304)
    expect(again.body).toBeNull()
    api.route("/b", "a")
    const changed = await api.handler(get("/api/analytics/openapi.json", {}, { "if-none-match": etag }))
    expect(changed.status).toBe(200)
    expect(Object.keys((bodyOf(changed) as OpenApiDocument).paths)).toEqual(["/api/analytics/a", "/api/analytics/b"])
  })

  it("moves each schema's $defs into components: shared definitions once, clashing names renamed", async () => {
    interface Node { readonly name: string; readonly children: ReadonlyArray<Node> }
    const Tree: z.ZodType<Node> = z.object({ name: z.string(), get children() { return z.array(Tree) } })
    interface Cat { readonly label: string; readonly parent?: Cat }
    const Category: z.ZodType<Cat> = z.object({ label: z.string(), get parent() { return Category.optional() } })
    const api = defineServe({
      queries: {
        trees: { method: "POST", inputSchema: z.object({ left: Tree, right: Tree }), outputSchema: Tree, query: () => ({ name: "", children: [] }) },
        categories: { method: "POST", inputSchema: z.object({ a: Category, b: Category }), query: () => 1 },
        rows: { outputSchema: Schema.Array(Row), query: () => [] },
        sameRows: { outputSchema: Schema.Array(Row), query: () => [] }
      }
    })
    const document = await documentOf(api)
    const schemas = document.components.schemas
    expect(Object.keys(schemas)).toEqual(["Date", "ErrorEnvelope", "Region", "Row", "__schema0", "__schema0_2", "treesOutput"])
    expect(schemas.__schema0).toMatchObject({ properties: { children: { items: { $ref: "#/components/schemas/__schema0" } } } })
    expect(schemas.__schema0_2).toMatchObject({ properties: { parent: { $ref: "#/components/schemas/__schema0_2" } } })
    expect(schemas.treesOutput).toMatchObject({ properties: { children: { items: { $ref: "#/components/schemas/treesOutput" } } } })
    const responses = operation(document, "/api/analytics/trees", "post").responses["200"]
    expect(responses).toMatchObject({ content: { "application/json": { schema: { $ref: "#/components/schemas/treesOutput" } } } })
    expect(JSON.stringify(document)).not.toContain("#/$defs")
    const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>)
    expect(result.valid).toBe(true)
  })

  it("documents a schema that has no JSON Schema as accepting anything", async () => {
    const api = defineServe({
      queries: {
        valibot: { method: "POST", inputSchema: v.object({ n: v.number() }), outputSchema: v.object({ n: v.number() }), query: () => ({ n: 1 }) },
        effect: { method: "POST", inputSchema: Schema.Struct({ at: Schema.DateFromSelf }), query: () => 1 }
      }
    })
    const document = await documentOf(api)
    // The validator itself says a body is required: `{}` fails both.
    for (const key of ["valibot", "effect"]) {
      expect(operation(document, `/api/analytics/${key}`, "post").requestBody).toEqual({ required: true, content: { "application/json": { schema: {} } } })
    }
    expect(operation(document, "/api/analytics/valibot", "post").responses["200"]).toMatchObject({ content: { "application/json": { schema: {} } } })
  })
})

describe("what the document says matches what the server does", () => {
  it("keeps none of the `$id`s Effect gives Unknown, Any, Object and Void: used more than once, they made the document invalid", async () => {
    const api = defineServe({
      queries: {
        nothing: { method: "POST", inputSchema: Schema.Void, query: () => 1 },
        loose: {
          method: "POST",
          inputSchema: Schema.Struct({ x: Schema.Unknown, y: Schema.Struct({ z: Schema.Unknown }), a: Schema.Any }),
          outputSchema: Schema.Struct({ u: Schema.Unknown, o: Schema.Object, v: Schema.Array(Schema.Any) }),
          query: () => ({ u: 1, o: {}, v: [] })
        },
        tagged: {
          inputSchema: Schema.Struct({ meta: Schema.optionalWith(Schema.Unknown, { default: () => ({ $id: "/schemas/mine" }) }) }),
          query: () => 1
        }
      }
    })
    const document = await documentOf(api)
    const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    const loose = operation(document, "/api/analytics/loose", "post")
    expect(loose.requestBody).toMatchObject({ content: { "application/json": { schema: { properties: { x: { title: "unknown" }, a: { title: "any" } } } } } })
    expect(JSON.stringify(loose)).not.toContain("$id")
    // A default is data: an `$id` in it is the caller's and stays.
    expect(operation(document, "/api/analytics/tagged", "get").parameters![0]!.schema).toEqual({ title: "unknown", default: { $id: "/schemas/mine" } })
  })

  it("requires a request body exactly when the server refuses a request without one", async () => {
    const queries: Record<string, ServeQueryEntry> = {
      array: { method: "POST", inputSchema: Schema.Array(Schema.Number), query: () => 1 },
      number: { method: "PUT", inputSchema: Schema.Number, query: () => 1 },
      zodArray: { method: "PATCH", inputSchema: z.array(z.string()), query: () => 1 },
      someRequired: { method: "POST", inputSchema: Schema.Struct({ a: Schema.Number }), query: () => 1 },
      noneRequired: { method: "POST", inputSchema: Schema.Struct({ a: Schema.optional(Schema.Number) }), query: () => 1 },
      nothing: { method: "POST", inputSchema: Schema.Void, query: () => 1 },
      zodNothing: { method: "POST", inputSchema: z.void(), query: () => 1 },
      withoutJsonSchema: { method: "POST", inputSchema: v.object({ n: v.number() }), query: () => 1 },
      untyped: { method: "POST", query: () => 1 }
    }
    const api = defineServe({ queries })
    const document = await documentOf(api)
    const required: Array<string> = []
    for (const [key, entry] of Object.entries(queries)) {
      const method = (entry as { method: string }).method
      const body = operation(document, `/api/analytics/${key}`, method.toLowerCase()).requestBody as { required: boolean }
      const answer = await api.handler({ method: method as "POST", path: `/api/analytics/${key}`, query: {}, headers: {} })
      expect([key, body.required]).toEqual([key, answer.status === 400])
      if (body.required) required.push(key)
    }
    expect(required).toEqual(["array", "number", "zodArray", "someRequired", "withoutJsonSchema"])
  })

  it("says that an endpoint requiring auth with no strategy to give it answers 401, without inventing a scheme", async () => {
    const { query } = initServe({})
    const api = defineServe({
      queries: {
        admin: query.requireRole("admin").describe("Totals across tenants.").query(() => "s"),
        signedIn: query.requireAuth().query(() => "s"),
        open: query.query(() => 1)
      }
    })
    const document = await documentOf(api)
    for (const key of ["admin", "signedIn"]) {
      const op = operation(document, `/api/analytics/${key}`, "get")
      expect(op.security).toBeUndefined()
      expect(op.responses["401"]).toEqual({ $ref: "#/components/responses/Unauthorized" })
      expect(op.description).toMatch(/no authentication strategy.*401/)
      expect((await api.handler(get(`/api/analytics/${key}`))).status).toBe(401)
    }
    expect(operation(document, "/api/analytics/admin", "get").description).toMatch(/^Totals across tenants\.\n\n/)
    expect(operation(document, "/api/analytics/open", "get").description).toBeUndefined()
    expect(document.security).toBeUndefined()
    expect(document.components.securitySchemes).toBeUndefined()
    // In process, a caller given as auth context still runs it.
    expect(await api.execute("admin", { context: { auth: { roles: ["admin"] } } })).toBe("s")
  })
})

describe("describe()", () => {
  it("returns each route's key, path, method, metadata and input/output JSON Schemas", () => {
    const api = defineServe({
      auth: apiKey,
      queries: {
        totals: {
          method: "POST",
          requiredScopes: ["read"],
          inputSchema: Schema.Struct({ region: Schema.String }),
          outputSchema: Schema.Struct({ total: Schema.Number }),
          query: () => ({ total: 1 })
        }
      }
    })
    api.route("/totals-by-get", "totals", { method: "GET" })
    const [primary, extra] = api.describe()
    expect(Object.keys(primary!).sort()).toEqual([
      "cacheTtlMs", "custom", "description", "errorStatuses", "inputRequired", "inputSchema", "key", "method", "name", "outputIsNothing",
      "outputSchema", "path", "requiredRoles", "requiredScopes", "requiresAuth", "responseHeaders", "securitySchemes", "summary", "tags"
    ])
    expect(primary).toMatchObject({
      key: "totals",
      path: "/api/analytics/totals",
      method: "POST",
      requiresAuth: true,
      requiredScopes: ["read"],
      inputSchema: { type: "object", required: ["region"], properties: { region: { type: "string" } } },
      outputSchema: { type: "object", required: ["total"], properties: { total: { type: "number" } } },
      securitySchemes: [{ type: "apiKey", in: "header", name: "x-api-key" }],
      errorStatuses: [400, 401, 403, 406, 413, 500, 503, 504],
      inputRequired: true,
      outputIsNothing: false
    })
    expect(extra).toMatchObject({ key: "totals", path: "/api/analytics/totals-by-get", method: "GET", errorStatuses: [400, 401, 403, 406, 500, 503, 504] })
  })

  it("is what buildOpenApiDocument reads: building from it gives the served document", async () => {
    const api = manyEndpoints()
    const options = { info: { title: "Many endpoints", version: "2.3.4", description: "Every shape at once." } }
    expect(buildOpenApiDocument(api.describe(), options)).toEqual(await documentOf(api))
  })

  it("documents a hand-built endpoint without inputRequired/outputIsNothing by its JSON Schemas", () => {
    const api = defineServe({
      queries: {
        report: { method: "POST", inputSchema: Schema.Struct({ region: Schema.String }), query: () => ({ total: 1 }) },
        note: { method: "POST", inputSchema: Schema.Struct({ text: Schema.optional(Schema.String) }), query: () => ({ total: 1 }) }
      }
    })
    const handBuilt = api.describe().map(({ inputRequired: _required, outputIsNothing: _nothing, ...endpoint }) => endpoint)
    const paths = buildOpenApiDocument(handBuilt).paths as unknown as Record<string, { post: { requestBody: { required: boolean }; responses: Record<string, unknown> } }>
    expect(paths["/api/analytics/report"]!.post.requestBody.required).toBe(true)
    expect(paths["/api/analytics/note"]!.post.requestBody.required).toBe(false)
    expect(Object.keys(paths["/api/analytics/report"]!.post.responses)).toContain("200")
  })
})
