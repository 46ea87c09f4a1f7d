import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js"
import { getHeader, type ServeRequest } from "../domain/http.js"
import type { MaybePromise } from "../domain/maybePromise.js"
import { bodyText } from "../stages/input.js"
import { serializeJson } from "../stages/output.js"
import type { StaticAnswer } from "../stages/staticRoute.js"
import { withUnabortableRequests } from "./directAbort.js"
import { encodedResult, type McpScope, type ToolHandlers, type ToolResult } from "./handlers.js"

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

const SENT: Promise<void> = Promise.resolve()

/**
 * A transport that hands the SDK's Server one JSON-RPC request at a time and gives its response to
 * `respond`. The Server stays connected to it, so a request costs no connect, no close and no
 * Request/Response objects.
 */
class DirectTransport implements Transport {
  onmessage?: Transport["onmessage"]
  onclose?: () => void
  onerror?: (error: Error) => void
  /** Where a request goes instead of `onmessage`, when the Server can take it as a request at once. */
  receive: ((message: JSONRPCRequest) => void) | undefined = undefined

  constructor(private readonly respond: (message: JSONRPCMessage) => void) {}

  start(): Promise<void> {
    return SENT
  }

  close(): Promise<void> {
    this.onclose?.()
    return SENT
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only the response answers the HTTP request; a notification the Server sends meanwhile has nowhere to go (no stream).
    if ("id" in message && ("result" in message || "error" in message)) this.respond(message)
    return SENT
  }

  request(message: JSONRPCRequest): void {
    if (this.receive === undefined) this.onmessage?.(message)
    else this.receive(message)
  }
}

/**
 * The Server's own request handling (dispatch, cancellation, the JSON-RPC response or error), entered
 * with a message already known to be a request. `onmessage` would first try the message against the
 * SDK's response, error and request schemas, three zod parses that cost more than the rest of the
 * Server's work on a call. It is the SDK's internal method: when a version of the SDK has it no
 * more, requests take `onmessage` as before. It runs with an abort controller that costs nothing
 * (see directAbort.ts: no request on this path can be cancelled).
 */
const requestReceiver = (server: Server): ((message: JSONRPCRequest) => void) | undefined => {
  const internal: { _onrequest?: unknown } = server as unknown as { _onrequest?: unknown }
  const onrequest = internal._onrequest
  if (typeof onrequest !== "function") return undefined
  const take = (message: JSONRPCRequest): void => void onrequest.call(server, message, undefined)
  return (message) => withUnabortableRequests(take, message)
}

/** A Server with the request it answers: its scope, and where its HTTP answer goes. */
interface Session {
  readonly transport: DirectTransport
  scope: McpScope | undefined
  resolve: ((answer: StaticAnswer) => void) | undefined
  reject: ((error: unknown) => void) | undefined
}

// Idle sessions kept for reuse; a burst beyond this many concurrent requests makes fresh ones.
const MAX_IDLE = 64

/** The headers the SDK's transport reads; the tools read the original request. */
const TRANSPORT_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"] as const

const JSON_ANSWER_HEADERS = { "content-type": "application/json" } as const

/** The SDK's answer to a method it has no handler for (its own words, without McpError's prefix). */
const METHOD_NOT_FOUND = Object.assign(new Error("Method not found"), { code: -32601 })

/**
 * The Server calls its fallback handler inside a promise's `then` (its request handling, SDK 1.x), where
 * a plain value is taken as it is and a throw becomes the JSON-RPC error: a tool answered synchronously
 * is handed over without a promise, two microtask turns and a promise less per call. The handler's
 * declared type asks for a promise.
 */
const handedOver = <T>(result: MaybePromise<T>): Promise<T> => result as Promise<T>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"])

/**
 * A request of the common shape, which the SDK's JSON-RPC request schema accepts as it is: checked
 * without a schema parse. Anything else (a `_meta`, an odd id) is left to that schema.
 */
const isPlainRequest = (message: Record<string, unknown>): message is JSONRPCRequest => {
  const { id, method, params } = message
  if (message["jsonrpc"] !== "2.0" || typeof method !== "string") return false
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return false
  if (params !== undefined && (!isRecord(params) || Object.getPrototypeOf(params) !== Object.prototype || "_meta" in params)) return false
  for (const key in message) if (!REQUEST_KEYS.has(key)) return false
  return Object.getPrototypeOf(message) === Object.prototype
}

/**
 * The response's JSON. A tool result was encoded when it was made (its value once, as text and as
 * `structuredContent`): it is put in as it is rather than serialized again.
 */
const encodeResponse = (response: JSONRPCMessage): string => {
  const encoded = "result" in response ? encodedResult(response.result) : undefined
  if (encoded === undefined || !("id" in response)) return serializeJson(response)
  return `{"result":${encoded},"jsonrpc":"2.0","id":${JSON.stringify(response.id)}}`
}

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

  /**
   * The tools answer as the Server's fallback handler rather than through `setRequestHandler`: that
   * would parse every `tools/call` with the SDK's zod schemas twice and copy its result through a third
   * parse (about a fifth of a call's CPU). The Server still reads, dispatches and answers the
   * messages; the parameters are checked here, and the results are built to MCP's types.
   */
  private makeServer(scope: () => McpScope): Server {
    const { Server: ServerClass } = this.sdk
    const server = new ServerClass(
      { name: this.info.name, version: this.info.version },
      { capabilities: { tools: { listChanged: false } }, instructions: this.info.instructions, jsonSchemaValidator: this.validator }
    )
    server.fallbackRequestHandler = (request) => {
      try {
        if (request.method === "tools/call") return handedOver(this.callTool(scope(), request.params))
        if (request.method === "tools/list") return this.handlers.list(scope()).then((tools) => ({ tools: [...tools] }), this.concealed)
      } catch (error) {
        return this.concealed(error)
      }
      return Promise.reject(METHOD_NOT_FOUND)
    }
    return server
  }

  /**
   * The Server copies a thrown error's message into the JSON-RPC error: only a JSON-RPC error of ours
   * goes out as it is; anything else (a fault of ours) is logged and answered as a bare internal error.
   */
  private readonly concealed = (error: unknown): never => {
    if (error instanceof this.sdk.McpError) throw error
    console.error("[queryserve] MCP request failed", error)
    throw new this.sdk.McpError(this.sdk.ErrorCode.InternalError, "Internal error")
  }

  /** A tool's result, or the JSON-RPC error `-32602` (thrown: the Server's handling turns it into the error response). */
  private callTool(scope: McpScope, params: JSONRPCRequest["params"]): MaybePromise<ToolResult> {
    const { McpError, ErrorCode } = this.sdk
    const name = params?.["name"]
    const args = params?.["arguments"]
    if (typeof name !== "string") throw new McpError(ErrorCode.InvalidParams, "Invalid tools/call request: name must be a string")
    if (args !== undefined && !isRecord(args)) throw new McpError(ErrorCode.InvalidParams, "Invalid tools/call request: arguments must be an object")
    const result = this.handlers.call(scope, name, args)
    if (result === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    return result
  }

  private openSession(): Session {
    const session: Session = { transport: new DirectTransport((response) => this.answered(session, response)), scope: undefined, resolve: undefined, reject: undefined }
    const scope = (): McpScope => {
      if (session.scope === undefined) throw new this.sdk.McpError(this.sdk.ErrorCode.InternalError, "No request in progress")
      return session.scope
    }
    // Connecting to a DirectTransport settles at once (its start does nothing).
    const server = this.makeServer(scope)
    void server.connect(session.transport)
    session.transport.receive = requestReceiver(server)
    return session
  }

  /** The Server's response: the session is free again, and the HTTP request gets its answer. */
  private answered(session: Session, response: JSONRPCMessage): void {
    const { resolve, reject } = session
    session.scope = undefined
    session.resolve = undefined
    session.reject = undefined
    if (this.idle.length < MAX_IDLE) this.idle.push(session)
    try {
      // The headers are copied where the answer gets its common headers.
      resolve?.({ status: 200, headers: JSON_ANSWER_HEADERS, body: encodeResponse(response) })
    } catch (error) {
      reject?.(error)
    }
  }

  /** The JSON-RPC request the direct path may answer, or undefined when the SDK's transport must. */
  private directRequest(request: ServeRequest, message: unknown): JSONRPCRequest | undefined {
    const { JSONRPCRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, isJsonContentType } = this.sdk
    const accept = getHeader(request, "accept")
    if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined
    if (!isJsonContentType(getHeader(request, "content-type"))) return undefined
    const version = getHeader(request, "mcp-protocol-version")
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined
    if (!isRecord(message)) return undefined
    if (isPlainRequest(message)) return message.method === "initialize" ? undefined : message
    const parsed = JSONRPCRequestSchema.safeParse(message)
    return parsed.success && parsed.data.method !== "initialize" ? parsed.data : undefined
  }

  private answerDirectly(message: JSONRPCRequest, scope: McpScope): Promise<StaticAnswer> {
    const session = this.idle.pop() ?? this.openSession()
    session.scope = scope
    return new Promise((resolve, reject) => {
      session.resolve = resolve
      session.reject = reject
      session.transport.request(message)
    })
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
