import type { OpenApiOptions } from "./options.js"
import type { HttpMethod } from "../domain/http.js"
import { type JsonSchema, objectProperties, otherPropertiesOf, typesOf } from "../domain/jsonSchema.js"
import { SchemaComponents } from "./components.js"
import { refusesEmptyObject, type ServeEndpoint } from "./endpoint.js"
import { ERROR_ENVELOPE, errorEnvelopeSchema, ErrorResponses } from "./errorResponses.js"
import { HeaderComponents } from "./headers.js"
import { operationResponses, SuccessResponses } from "./responses.js"
import { type SecurityScheme, SecuritySchemeNames } from "./securityScheme.js"

type SecurityRequirements = ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>

/** An OpenAPI 3.1 document; operations and schemas are plain JSON. */
export interface OpenApiDocument {
  readonly openapi: "3.1.0"
  readonly info: NonNullable<OpenApiOptions["info"]> & { readonly title: string; readonly version: string }
  readonly servers: ReadonlyArray<{ readonly url: string; readonly description?: string }>
  /** What every operation requires unless it says otherwise (`security: []` on public ones). */
  readonly security?: SecurityRequirements
  readonly tags?: NonNullable<OpenApiOptions["tags"]>
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
  readonly security?: SecurityRequirements
  readonly parameters?: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly requestBody?: Readonly<Record<string, unknown>>
  readonly responses: Readonly<Record<string, unknown>>
}

const DEFAULT_TITLE = "queryserve API"
const DEFAULT_VERSION = "1.0.0"

// Methods whose input travels in the query string; the others send a JSON body.
const QUERY_METHODS: ReadonlySet<HttpMethod> = new Set(["GET", "HEAD", "DELETE"])
// Path Item fields in the order the specification lists them.
const METHOD_ORDER: ReadonlyArray<HttpMethod> = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH"]
// Without a configured or listening URL, servers are relative to where the document was fetched from.
const SAME_ORIGIN = [{ url: "/" }]
// In a path, `{` and `}` open a template, `?` and `#` end it, and `%` starts an escape.
const SPECIAL_IN_PATH = /[{}?#%]/g

/** A route's path as a `paths` key: those characters percent-encoded, as the server also finds them (see `respelledPath`). */
const pathKey = (path: string): string => path.replace(SPECIAL_IN_PATH, (character) => encodeURIComponent(character))

// Strategies run before roles and scopes are checked: without one, no caller can be authenticated.
const NO_STRATEGY =
  "Requires authentication, but no authentication strategy is configured for it: every request is answered 401. " +
  "(An in-process `execute` given the caller as `auth` in its context can run it.)"

/**
 * The endpoint's description, with a line saying so when no strategy can ever let a request through,
 * and the roles (any one) and scopes (all) it requires, worded as @hypequery/serve words them.
 */
const descriptionOf = (endpoint: ServeEndpoint): string | undefined => {
  const parts = [
    endpoint.description,
    endpoint.requiresAuth && endpoint.securitySchemes.length === 0 ? NO_STRATEGY : undefined,
    endpoint.requiredRoles.length > 0 ? `**Required roles:** ${endpoint.requiredRoles.join(", ")}` : undefined,
    endpoint.requiredScopes.length > 0 ? `**Required scopes:** ${endpoint.requiredScopes.join(", ")}` : undefined
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? undefined : parts.join("\n\n")
}

/** Operation ids are unique: the endpoint's first route gets the key, later routes `key_method`, then `key_method_2`. */
const claimOperationId = (endpoint: ServeEndpoint, taken: Set<string>): string => {
  const byMethod = `${endpoint.key}_${endpoint.method.toLowerCase()}`
  let id = taken.has(endpoint.key) ? byMethod : endpoint.key
  for (let n = 2; taken.has(id); n++) id = `${byMethod}_${n}`
  taken.add(id)
  return id
}

/**
 * The keys a record input takes beyond those it names, as one parameter: an object in `form` style,
 * exploded, is sent as one `key=value` pair per property, so its own name never goes on the wire.
 */
const otherKeysParameter = (input: JsonSchema, root: JsonSchema, named: ReadonlySet<string>): Record<string, unknown> | undefined => {
  const others = otherPropertiesOf(input, root)
  if (others === undefined) return undefined
  let name = "params"
  while (named.has(name)) name = `${name}_`
  return {
    name,
    in: "query",
    required: false,
    style: "form",
    explode: true,
    description: "Keys of your choosing, each sent as its own query parameter (`?a=1&b=2`).",
    schema: {
      type: "object",
      ...(others.patternProperties.length > 0 ? { patternProperties: Object.fromEntries(others.patternProperties) } : {}),
      ...(others.additionalProperties !== undefined ? { additionalProperties: others.additionalProperties } : {})
    }
  }
}

/** Query parameters from an object input schema; lists use repeated keys (`form`, exploded); a record's other keys are one more. */
const queryParameters = (input: JsonSchema, root: JsonSchema): ReadonlyArray<Record<string, unknown>> => {
  const properties = objectProperties(input, root) ?? new Map()
  const named = [...properties].map(([name, { schema, required }]) => ({
    name,
    in: "query",
    required,
    ...(typeof schema.description === "string" ? { description: schema.description } : {}),
    ...(typesOf(schema, root).has("array") ? { style: "form", explode: true } : {}),
    schema
  }))
  const others = otherKeysParameter(input, root, new Set(properties.keys()))
  return others === undefined ? named : [...named, others]
}

/**
 * The schemes every endpoint that requires auth accepts: the strategies they all end with (the
 * global ones come last in each endpoint's list). Empty when some endpoint takes none of them.
 */
const sharedSchemes = (endpoints: ReadonlyArray<ServeEndpoint>): ReadonlyArray<SecurityScheme> => {
  let shared: ReadonlyArray<SecurityScheme> | undefined
  for (const endpoint of endpoints) {
    if (!endpoint.requiresAuth) continue
    const own = endpoint.securitySchemes
    if (shared === undefined) {
      shared = own
      continue
    }
    let length = 0
    while (length < shared.length && length < own.length &&
      JSON.stringify(shared[shared.length - 1 - length]) === JSON.stringify(own[own.length - 1 - length])) length++
    shared = shared.slice(shared.length - length)
  }
  return shared ?? []
}

/** Builds documents for one list of endpoints; each piece of shared state lives here. */
class DocumentBuilder {
  readonly schemas = new SchemaComponents()
  readonly headers = new HeaderComponents()
  readonly securitySchemes = new SecuritySchemeNames()
  readonly successes = new SuccessResponses(this.headers)
  readonly errors = new ErrorResponses()
  readonly tags = new Set<string>()
  /** The document's root `security`, when every endpoint that requires auth shares a scheme. */
  readonly rootSecurity: SecurityRequirements | undefined
  private readonly operationIds = new Set<string>()

  constructor(endpoints: ReadonlyArray<ServeEndpoint>) {
    this.schemas.define(ERROR_ENVELOPE, errorEnvelopeSchema)
    const shared = sharedSchemes(endpoints)
    this.rootSecurity = shared.length === 0 ? undefined : shared.map((scheme) => ({ [this.securitySchemes.nameOf(scheme)]: [] }))
  }

  operation(endpoint: ServeEndpoint): OpenApiOperation {
    const operationId = claimOperationId(endpoint, this.operationIds)
    for (const tag of endpoint.tags) this.tags.add(tag)
    this.errors.add(endpoint)
    const security = this.security(endpoint)
    const description = descriptionOf(endpoint)
    return {
      operationId,
      summary: endpoint.summary ?? endpoint.name,
      ...(description !== undefined ? { description } : {}),
      ...(endpoint.tags.length > 0 ? { tags: endpoint.tags } : {}),
      ...(security !== undefined ? { security } : {}),
      ...this.input(endpoint, operationId),
      responses: operationResponses(endpoint, operationId, this.schemas, this.headers, this.successes)
    }
  }

  /**
   * Any one of the endpoint's schemes will do; OAuth2 and OpenID Connect list the scopes it requires.
   * A public endpoint of a document with a root `security` says `[]`: it needs none of it. One that
   * requires auth without a strategy lists none (there is no scheme to name; its description says so),
   * and keeps the document from having a root `security` (see `sharedSchemes`).
   */
  private security(endpoint: ServeEndpoint): OpenApiOperation["security"] {
    if (!endpoint.requiresAuth || endpoint.securitySchemes.length === 0) return this.rootSecurity === undefined ? undefined : []
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
    return {
      requestBody: {
        required: endpoint.inputRequired ?? refusesEmptyObject(input),
        // No input schema: the body may be anything.
        content: { "application/json": { schema: input ?? {} } }
      }
    }
  }

  /** Configured tags first, in their order and with their descriptions, then the others operations use, sorted. */
  documentTags(configured: OpenApiOptions["tags"] = []): OpenApiDocument["tags"] {
    const named = new Set(configured.map((tag) => tag.name))
    const tags = [...configured, ...[...this.tags].filter((name) => !named.has(name)).sort().map((name) => ({ name }))]
    return tags.length > 0 ? tags : undefined
  }
}

/**
 * The OpenAPI 3.1.0 document of a list of endpoints (what `describe()` returns). Deterministic: the
 * same endpoints give the same document, key for key; paths keep the endpoints' order, methods and
 * components are sorted, tags follow `options.tags` and then their names.
 */
export const buildOpenApiDocument = (endpoints: ReadonlyArray<ServeEndpoint>, options: OpenApiOptions = {}): OpenApiDocument => {
  const builder = new DocumentBuilder(endpoints)
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
    paths[pathKey(path)] = item
  }
  const { title: _title, version: _version, ...info } = options.info ?? {}
  const tags = builder.documentTags(options.tags)
  const responses = { ...builder.successes.toJSON(), ...builder.errors.components(builder.headers) }
  return {
    openapi: "3.1.0",
    info: {
      title: options.info?.title ?? options.title ?? DEFAULT_TITLE,
      version: options.info?.version ?? options.version ?? DEFAULT_VERSION,
      ...info
    },
    servers: options.servers ?? SAME_ORIGIN,
    ...(builder.rootSecurity !== undefined ? { security: builder.rootSecurity } : {}),
    ...(tags !== undefined ? { tags } : {}),
    paths,
    components: {
      schemas: builder.schemas.toJSON(),
      responses,
      headers: builder.headers.toJSON(),
      ...(builder.securitySchemes.size > 0 ? { securitySchemes: builder.securitySchemes.toJSON() } : {})
    }
  }
}
