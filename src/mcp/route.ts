import type { EndpointInfo } from "../domain/config.js"
import type { DocsPlan } from "../docs/options.js"
import type { AuthStrategy } from "../domain/config.js"
import type { OpenApiPlan } from "../openapi/options.js"
import type { CorsOptions } from "../stages/cors.js"
import type { McpPlan } from "./options.js"
import { joinPath } from "../domain/paths.js"
import { Forbidden, Unauthorized } from "../domain/errors.js"
import { getHeader, type ServeRequest } from "../domain/http.js"
import { andThen } from "../domain/maybePromise.js"
import { compileCors } from "../stages/cors.js"
import { assertNestingDepth, bodyText, parseJsonText } from "../stages/input.js"
import type { PipelineService } from "../services/Pipeline.js"
import type { StaticAnswer, StaticRoute } from "../stages/staticRoute.js"
import { makeToolHandlers, type McpScope } from "./handlers.js"
import { McpServerPool, type McpServerInfo } from "./server.js"
import { buildCatalogue } from "./catalogue.js"

/** The `endpoint.key` strategies see when they authenticate an MCP request (a `$` name, like the metrics route's). */
const MCP_ROUTE_KEY = "$mcp"

/** Where the MCP endpoint is served; undefined when `mcp` is off. */
/** What the MCP route reads of an API's definition; `strategies` grows with `useAuth`. */
interface McpSettings {
  readonly basePath: string
  readonly mcp: McpPlan | undefined
  readonly openapi: OpenApiPlan
  readonly docs: DocsPlan
  readonly cors: true | CorsOptions | undefined
  readonly strategies: ReadonlyArray<AuthStrategy>
}

const mcpPath = (definition: McpSettings): string | undefined =>
  definition.mcp === undefined ? undefined : joinPath(definition.basePath, definition.mcp.path)

const serverInfo = (definition: McpSettings): McpServerInfo => {
  const { mcp, openapi, docs } = definition
  return {
    name: mcp?.name ?? openapi.info?.title ?? openapi.title ?? docs.title ?? "queryserve",
    version: mcp?.version ?? openapi.info?.version ?? openapi.version ?? "1.0.0",
    instructions: mcp?.instructions
  }
}

/** A batch longer than `mcp.maxBatch`, refused whole: a JSON-RPC Invalid Request, none of its messages run. */
const batchTooLong = (length: number, maxBatch: number): StaticAnswer => ({
  status: 400,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: null,
    error: { code: -32600, message: `One request may carry at most ${maxBatch} JSON-RPC messages (mcp.maxBatch); this one carries ${length}` }
  })
})

/**
 * The body as a JSON value; undefined when it is not JSON (the SDK then reads it and answers the
 * parse error). Too deep a body is refused as on any endpoint.
 */
const parseBody = (body: unknown): unknown => {
  const text = bodyText(body)
  // A framework in front may have parsed it already.
  if (text === undefined) return body === null ? undefined : body
  assertNestingDepth(text)
  try {
    return parseJsonText(text)
  } catch {
    return undefined
  }
}

const missingCredentials = () => new Unauthorized({ message: "Authentication required", reason: "missing_credentials" })

const LOOPBACK_HOST = /^(localhost|127(\.\d+){3}|\[::1\])$/

const hostnameOf = (host: string): string => host.replace(/:\d+$/, "").toLowerCase()

const loopbackOrigin = (origin: string): boolean => {
  try {
    return LOOPBACK_HOST.test(new URL(origin).hostname)
  } catch {
    return false
  }
}

/**
 * DNS rebinding protection: a browser page (it sends `Origin`) may use the MCP endpoint when the CORS
 * policy allows its origin, or when both the page and the server are on this machine (loopback names).
 * A rebinding page calls with its own host as Host and Origin, so a same-origin check alone would pass it.
 * Agents and other non-browser clients send no Origin.
 */
const originCheck = (definition: McpSettings): ((request: ServeRequest) => void) => {
  const cors = compileCors(definition.cors)
  return (request) => {
    const origin = getHeader(request, "origin")
    if (origin === undefined || cors?.allows(origin) === true) return
    const host = getHeader(request, "host")
    if (loopbackOrigin(origin) && (host === undefined || LOOPBACK_HOST.test(hostnameOf(host)))) return
    throw new Forbidden({ message: `Pages of ${origin} may not use this MCP endpoint`, reason: "origin_not_allowed" })
  }
}

/**
 * The MCP endpoint (POST `basePath + mcp.path`). A browser page of a foreign origin is refused (403).
 * With global strategies the HTTP request is authenticated first: no credentials, or invalid ones,
 * answer 401 with the ErrorEnvelope before any MCP message is read. Then the SDK answers the JSON-RPC
 * messages, and tools run through the pipeline. Only POST is routed, so GET and DELETE get 405: a
 * stateless server has no stream to open and no session to end.
 */
export const mcpRoutes = (definition: McpSettings, pipeline: () => PipelineService): ReadonlyArray<StaticRoute> => {
  const path = mcpPath(definition)
  if (path === undefined) return []
  // What the global strategies see as the endpoint when they authenticate an MCP request.
  const info: EndpointInfo = {
    key: MCP_ROUTE_KEY,
    name: "MCP",
    path,
    method: "POST",
    requiresAuth: definition.strategies.length > 0,
    requiredRoles: [],
    requiredScopes: [],
    summary: "Model Context Protocol",
    description: undefined,
    tags: [],
    cacheTtlMs: null,
    custom: undefined
  }
  const checkOrigin = originCheck(definition)
  // Built on the first MCP request, from the plans of that compilation (a changed definition compiles new routes).
  let pool: McpServerPool | undefined
  let loading: Promise<McpServerPool> | undefined
  const load = (): Promise<McpServerPool> =>
    (loading ??= McpServerPool.load(
      serverInfo(definition),
      makeToolHandlers(pipeline(), buildCatalogue(pipeline().routes())),
      path
    ).then((loaded) => (pool = loaded)))

  const maxBatch = definition.mcp?.maxBatch
  const answer = (request: ServeRequest, requestId: string): Promise<StaticAnswer> => {
    const message = parseBody(request.body)
    if (Array.isArray(message) && maxBatch !== undefined && message.length > maxBatch) return Promise.resolve(batchTooLong(message.length, maxBatch))
    const scope: McpScope = { request, requestId }
    return pool !== undefined ? pool.answer(request, message, scope) : load().then((loaded) => loaded.answer(request, message, scope))
  }

  return [{
    method: "POST",
    path,
    key: MCP_ROUTE_KEY,
    respond: (request, requestId) => {
      checkOrigin(request)
      const strategies = definition.strategies
      if (strategies.length === 0) return answer(request, requestId)
      // Credentials the global strategies refuse for the MCP endpoint get a 401 before any message is
      // read; each tool then authenticates for its own endpoint.
      return andThen(pipeline().authenticate(strategies, request, info), (caller) => {
        if (caller === null) throw missingCredentials()
        return answer(request, requestId)
      })
    }
  }]
}
