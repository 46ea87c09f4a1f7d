import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { getHeader, type ServeRequest } from "../domain/http.js"
import { bodyText } from "../pipeline/input.js"
import { serializeJson } from "../pipeline/output.js"
import type { StaticAnswer } from "../services/Pipeline.js"
import type { McpScope, ToolHandlers } from "./handlers.js"

/** The SDK modules MCP needs, loaded on the first MCP request: an API without `mcp` never loads them. */
const loadSdk = () =>
  Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/shared/mediaType.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@modelcontextprotocol/sdk/validation/ajv")
  ]).then(([server, transport, mediaType, types, ajv]) => ({ ...server, ...transport, ...mediaType, ...types, ...ajv }))

type Sdk = Awaited<ReturnType<typeof loadSdk>>

let sdk: Promise<Sdk> | undefined

export interface McpServerInfo {
  readonly name: string
  readonly version: string
  readonly instructions: string | undefined
}

/**
 * A transport that hands the SDK's Server one JSON-RPC request at a time and resolves with its
 * response. The Server stays connected to it, so a request costs no connect, no close and no
 * Request/Response objects.
 */
class DirectTransport implements Transport {
  onmessage?: Transport["onmessage"]
  onclose?: () => void
  onerror?: (error: Error) => void
  private respond: ((message: JSONRPCMessage) => void) | undefined = undefined

  start(): Promise<void> {
    return Promise.resolve()
  }

  close(): Promise<void> {
    this.onclose?.()
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only the response answers the HTTP request; a notification the Server sends meanwhile has nowhere to go (no stream).
    if ("id" in message && ("result" in message || "error" in message)) this.respond?.(message)
    return Promise.resolve()
  }

  request(message: JSONRPCMessage): Promise<JSONRPCMessage> {
    return new Promise((resolve) => {
      this.respond = resolve
      this.onmessage?.(message)
    })
  }
}

/** A Server with the scope of the request it answers. */
interface Session {
  readonly transport: DirectTransport
  scope: McpScope | undefined
}

// Idle sessions kept for reuse; a burst beyond this many concurrent requests makes fresh ones.
const MAX_IDLE = 64

/** The headers the SDK's transport reads; the tools read the original request. */
const TRANSPORT_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"] as const

const JSON_ANSWER_HEADERS = { "content-type": "application/json" } as const

const toAnswer = async (response: Response): Promise<StaticAnswer> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return { status: response.status, headers, body: response.body === null ? null : await response.text() }
}

/**
 * Answers MCP HTTP requests with the SDK's low-level `Server` (the tools are JSON Schemas already and
 * `tools/list` depends on the caller, which the high-level `McpServer` does not model), stateless, with
 * JSON answers rather than SSE streams.
 *
 * The SDK's Web-standard Streamable HTTP transport answers every request, except the common one it
 * would answer with a plain JSON body: a single well-formed JSON-RPC request (not `initialize`) whose
 * headers that transport accepts. That one goes straight to a pooled Server, connected once to a
 * DirectTransport: building a Request, a Response and their streams costs several times a whole HTTP
 * endpoint call. Initialization, notifications, batches and everything malformed get the SDK's own answers.
 */
export class McpServerPool {
  private readonly idle: Array<Session> = []
  // One validator for every Server (the SDK's default builds one per Server; tools never use it).
  private readonly validator: InstanceType<Sdk["AjvJsonSchemaValidator"]>

  private constructor(
    private readonly sdk: Sdk,
    private readonly info: McpServerInfo,
    private readonly handlers: ToolHandlers,
    private readonly path: string
  ) {
    this.validator = new sdk.AjvJsonSchemaValidator()
  }

  static load(info: McpServerInfo, handlers: ToolHandlers, path: string): Promise<McpServerPool> {
    return (sdk ??= loadSdk()).then((loaded) => new McpServerPool(loaded, info, handlers, path))
  }

  private makeServer(scope: () => McpScope): Server {
    const { Server: ServerClass, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = this.sdk
    const server = new ServerClass(
      { name: this.info.name, version: this.info.version },
      { capabilities: { tools: { listChanged: false } }, instructions: this.info.instructions, jsonSchemaValidator: this.validator }
    )
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...await this.handlers.list(scope())] }))
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args } = request.params
      const result = this.handlers.call(scope(), name, args)
      if (result === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
      return result
    })
    return server
  }

  private openSession(): Session {
    const session: Session = { transport: new DirectTransport(), scope: undefined }
    const scope = (): McpScope => {
      if (session.scope === undefined) throw new this.sdk.McpError(this.sdk.ErrorCode.InternalError, "No request in progress")
      return session.scope
    }
    // Connecting to a DirectTransport settles at once (its start does nothing).
    void this.makeServer(scope).connect(session.transport)
    return session
  }

  /** The JSON-RPC request the direct path may answer, or undefined when the SDK's transport must. */
  private directRequest(request: ServeRequest, message: unknown): JSONRPCMessage | undefined {
    const { JSONRPCRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, isJsonContentType } = this.sdk
    const accept = getHeader(request, "accept")
    if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined
    if (!isJsonContentType(getHeader(request, "content-type"))) return undefined
    const version = getHeader(request, "mcp-protocol-version")
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined
    if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined
    const parsed = JSONRPCRequestSchema.safeParse(message)
    return parsed.success && parsed.data.method !== "initialize" ? parsed.data : undefined
  }

  private async answerDirectly(message: JSONRPCMessage, scope: McpScope): Promise<StaticAnswer> {
    const session = this.idle.pop() ?? this.openSession()
    session.scope = scope
    try {
      const response = await session.transport.request(message)
      return { status: 200, headers: { ...JSON_ANSWER_HEADERS }, body: serializeJson(response) }
    } finally {
      session.scope = undefined
      if (this.idle.length < MAX_IDLE) this.idle.push(session)
    }
  }

  /** The SDK's Web-standard transport, stateless with JSON answers, on a Server of its own. */
  private async answerWithSdk(request: ServeRequest, message: unknown, scope: McpScope): Promise<StaticAnswer> {
    const headers = new Headers()
    for (const name of TRANSPORT_HEADERS) {
      const value = getHeader(request, name)
      if (value !== undefined) headers.set(name, value)
    }
    // The body was read already: the transport gets it parsed, or as text when it is not JSON (it answers the parse error).
    const body = message === undefined ? bodyText(request.body) : undefined
    const webRequest = new Request(`http://localhost${this.path}`, { method: request.method, headers, body })
    const transport = new this.sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await this.makeServer(() => scope).connect(transport)
    return toAnswer(await transport.handleRequest(webRequest, message === undefined ? undefined : { parsedBody: message }))
  }

  /** One MCP HTTP request; `message` is its parsed JSON body, undefined when the body is not JSON. */
  answer(request: ServeRequest, message: unknown, scope: McpScope): Promise<StaticAnswer> {
    const direct = this.directRequest(request, message)
    return direct === undefined ? this.answerWithSdk(request, message, scope) : this.answerDirectly(direct, scope)
  }
}
