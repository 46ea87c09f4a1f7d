import type { OpenApiOptions } from "../domain/config.js"
import type { HttpMethod } from "../domain/http.js"
import { type JsonSchema, objectProperties, typesOf } from "../domain/jsonSchema.js"
import { SchemaComponents } from "./components.js"
import type { ServeEndpoint } from "./endpoint.js"
import {
  ERROR_ENVELOPE,
  errorEnvelopeSchema,
  errorResponseComponents,
  errorResponseName,
  REQUEST_ID_HEADER,
  requestIdHeader,
  requestIdHeaderComponent
} from "./errorResponses.js"
import { type SecurityScheme, SecuritySchemeNames } from "./securityScheme.js"

/** An OpenAPI 3.1 document; operations and schemas are plain JSON. */
export interface OpenApiDocument {
  readonly openapi: "3.1.0"
  readonly info: { readonly title: string; readonly version: string; readonly description?: string }
  readonly tags?: ReadonlyArray<{ readonly name: string }>
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>>
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>
    readonly responses: Readonly<Record<string, unknown>>
    readonly headers: Readonly<Record<string, unknown>>
    readonly securitySchemes?: Readonly<Record<string, SecurityScheme>>
  }
}

export interface OpenApiOperation {
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly security?: ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>
  readonly parameters?: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly requestBody?: Readonly<Record<string, unknown>>
  readonly responses: Readonly<Record<string, unknown>>
}

export const DEFAULT_TITLE = "queryserve API"
export const DEFAULT_VERSION = "1.0.0"

// Methods whose input travels in the query string (DESIGN.md, Input); the others send a JSON body.
const QUERY_METHODS: ReadonlySet<HttpMethod> = new Set(["GET", "HEAD", "DELETE"])
// Path Item fields in the order the specification lists them.
const METHOD_ORDER: ReadonlyArray<HttpMethod> = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH"]
// Output formats a GET endpoint with a list result also answers in (negotiated by Accept).
const LIST_FORMATS = ["text/csv", "application/x-ndjson"]

/** Operation ids are unique: the endpoint's first route gets the key, later routes `key_method`, then `key_method_2`. */
const claimOperationId = (endpoint: ServeEndpoint, taken: Set<string>): string => {
  const byMethod = `${endpoint.key}_${endpoint.method.toLowerCase()}`
  let id = taken.has(endpoint.key) ? byMethod : endpoint.key
  for (let n = 2; taken.has(id); n++) id = `${byMethod}_${n}`
  taken.add(id)
  return id
}

/** Query parameters from an object input schema; lists use repeated keys (`form`, exploded). */
const queryParameters = (input: JsonSchema, root: JsonSchema): ReadonlyArray<Record<string, unknown>> => {
  const properties = objectProperties(input, root)
  if (properties === undefined) return []
  return [...properties].map(([name, { schema, required }]) => ({
    name,
    in: "query",
    required,
    ...(typeof schema.description === "string" ? { description: schema.description } : {}),
    ...(typesOf(schema, root).has("array") ? { style: "form", explode: true } : {}),
    schema
  }))
}

const hasRequiredProperty = (input: JsonSchema, root: JsonSchema): boolean =>
  [...(objectProperties(input, root)?.values() ?? [])].some((property) => property.required)

/** Builds documents for one list of endpoints; each piece of shared state lives here. */
class DocumentBuilder {
  readonly schemas = new SchemaComponents()
  readonly securitySchemes = new SecuritySchemeNames()
  readonly errorStatuses = new Set<number>()
  readonly tags = new Set<string>()
  private readonly operationIds = new Set<string>()

  constructor() {
    this.schemas.define(ERROR_ENVELOPE, errorEnvelopeSchema)
  }

  operation(endpoint: ServeEndpoint): OpenApiOperation {
    const operationId = claimOperationId(endpoint, this.operationIds)
    for (const tag of endpoint.tags) this.tags.add(tag)
    const security = this.security(endpoint)
    const description = endpoint.description
    return {
      operationId,
      summary: endpoint.summary ?? endpoint.name,
      ...(description !== undefined ? { description } : {}),
      ...(endpoint.tags.length > 0 ? { tags: endpoint.tags } : {}),
      ...(security !== undefined ? { security } : {}),
      ...this.input(endpoint, operationId),
      responses: this.responses(endpoint, operationId)
    }
  }

  /** Any one of the endpoint's schemes will do; OAuth2 and OpenID Connect list the scopes it requires. */
  private security(endpoint: ServeEndpoint): OpenApiOperation["security"] {
    if (!endpoint.requiresAuth || endpoint.securitySchemes.length === 0) return undefined
    const requirements = new Map<string, ReadonlyArray<string>>()
    for (const scheme of endpoint.securitySchemes) {
      const scoped = scheme.type === "oauth2" || scheme.type === "openIdConnect"
      requirements.set(this.securitySchemes.nameOf(scheme), scoped ? endpoint.requiredScopes : [])
    }
    return [...requirements].map(([name, scopes]) => ({ [name]: scopes }))
  }

  private input(endpoint: ServeEndpoint, operationId: string): Pick<OpenApiOperation, "parameters" | "requestBody"> {
    const input = endpoint.inputSchema === undefined ? undefined : this.schemas.embed(endpoint.inputSchema, `${operationId}Input`)
    if (QUERY_METHODS.has(endpoint.method)) {
      const parameters = input === undefined ? [] : queryParameters(input, this.schemas.root)
      return parameters.length > 0 ? { parameters } : {}
    }
    // No input schema: the body may be anything.
    const schema = input ?? {}
    return {
      requestBody: {
        required: input !== undefined && hasRequiredProperty(input, this.schemas.root),
        content: { "application/json": { schema } }
      }
    }
  }

  private responses(endpoint: ServeEndpoint, operationId: string): Record<string, unknown> {
    const output = endpoint.outputSchema === undefined ? {} : this.schemas.embed(endpoint.outputSchema, `${operationId}Output`)
    const content: Record<string, unknown> = { "application/json": { schema: output } }
    const types = typesOf(output, this.schemas.root)
    if (endpoint.method === "GET" && types.size === 1 && types.has("array")) {
      for (const format of LIST_FORMATS) content[format] = { schema: { type: "string" } }
    }
    const responses: Record<string, unknown> = {
      "200": { description: "Successful response.", headers: requestIdHeader, content }
    }
    for (const status of endpoint.errorStatuses) {
      this.errorStatuses.add(status)
      responses[String(status)] = { $ref: `#/components/responses/${errorResponseName(status)}` }
    }
    return responses
  }
}

/**
 * The OpenAPI 3.1.0 document of a list of endpoints (what `describe()` returns). Deterministic: the
 * same endpoints give the same document, key for key; paths keep the endpoints' order, methods,
 * tags and components are sorted.
 */
export const buildOpenApiDocument = (endpoints: ReadonlyArray<ServeEndpoint>, options: OpenApiOptions = {}): OpenApiDocument => {
  const builder = new DocumentBuilder()
  const operations = new Map<string, Map<HttpMethod, OpenApiOperation>>()
  for (const endpoint of endpoints) {
    let pathItem = operations.get(endpoint.path)
    if (pathItem === undefined) operations.set(endpoint.path, (pathItem = new Map()))
    pathItem.set(endpoint.method, builder.operation(endpoint))
  }
  const paths: Record<string, Record<string, OpenApiOperation>> = {}
  for (const [path, pathItem] of operations) {
    const item: Record<string, OpenApiOperation> = {}
    for (const method of METHOD_ORDER) {
      const operation = pathItem.get(method)
      if (operation !== undefined) item[method.toLowerCase()] = operation
    }
    paths[path] = item
  }
  const description = options.info?.description
  return {
    openapi: "3.1.0",
    info: {
      title: options.info?.title ?? options.title ?? DEFAULT_TITLE,
      version: options.info?.version ?? options.version ?? DEFAULT_VERSION,
      ...(description !== undefined ? { description } : {})
    },
    ...(builder.tags.size > 0 ? { tags: [...builder.tags].sort().map((name) => ({ name })) } : {}),
    paths,
    components: {
      schemas: builder.schemas.toJSON(),
      responses: errorResponseComponents(builder.errorStatuses),
      headers: { [REQUEST_ID_HEADER]: requestIdHeaderComponent },
      ...(builder.securitySchemes.size > 0 ? { securitySchemes: builder.securitySchemes.toJSON() } : {})
    }
  }
}
