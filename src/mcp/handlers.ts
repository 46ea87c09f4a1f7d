import type { ServeAuthContext } from "../domain/config.js"
import { toErrorResponse } from "../domain/envelope.js"
import type { HeaderMap, ServeRequest } from "../domain/http.js"
import { TransportRequest } from "../domain/transportRequest.js"
import { andThen, type MaybePromise } from "../domain/maybePromise.js"
import { serializeJson } from "../stages/output.js"
import type { EndpointPlan } from "../stages/plan.js"
import { collectRows, RowStream } from "../stages/rowStream.js"
import type { ExecutionOutcome, PipelineService } from "../services/Pipeline.js"
import { INPUT_FIELD, type McpTool, RESULT_FIELD, type ToolCatalogue, type ToolDescriptor } from "./tools.js"

/** The MCP HTTP request messages came in. */
export interface McpScope {
  readonly request: ServeRequest
  readonly requestId: string
}

/**
 * Where a tool result made by `toToolResult` keeps its own JSON, so the answer puts it in instead of
 * serializing the result again. A symbol key: JSON.stringify (the SDK's transport) leaves it out.
 */
const ENCODED: unique symbol = Symbol("queryserve.mcp.encoded")

/** MCP's CallToolResult as queryserve fills it (mutable, as the SDK's type is; a type literal, so it fits the SDK's index signature). */
export type ToolResult = {
  content: Array<{ type: "text"; text: string }>
  structuredContent?: Record<string, unknown>
  isError?: true
  [ENCODED]?: string
}

export interface ToolHandlers {
  /** The tools whose guards the caller passes. */
  list(scope: McpScope): Promise<ReadonlyArray<ToolDescriptor>>
  /** Runs a tool; undefined when there is no tool of that name. */
  call(scope: McpScope, name: string, args: Readonly<Record<string, unknown>> | undefined): MaybePromise<ToolResult> | undefined
}

/**
 * The request a tool call runs with: the MCP request's headers, client address and signal, at the
 * endpoint's method and path, with no query string and no body (the input is the tool's arguments).
 */
class ToolRequest implements ServeRequest {
  constructor(private readonly outer: ServeRequest, readonly method: string, readonly path: string) {}
  get headers(): HeaderMap | undefined {
    return this.outer.headers
  }
  get remoteAddress(): string | undefined {
    return this.outer.remoteAddress
  }
  get signal(): AbortSignal | undefined {
    return this.outer.signal
  }
  get raw(): unknown {
    return this.outer.raw
  }
}

/**
 * The tool call's request when the MCP request came from queryserve's adapters: a TransportRequest
 * too, so header reads keep the adapters' fast path (their names are lower-case: a miss is final,
 * where any other request has every name compared on each miss). The signal is the MCP request's,
 * and so is the deadline: when it passes, the tool call fails with the timeout error (a 504 in its
 * events and metrics, an `isError` result) instead of running on unanswered.
 */
class AdapterToolRequest extends TransportRequest {
  constructor(private readonly outer: TransportRequest, method: string, path: string) {
    super(method, path, "", outer.headers, undefined, outer.remoteAddress, outer.raw, undefined, outer.traceParent)
    outer.carry(this)
  }
  override get signal(): AbortSignal {
    return this.outer.signal
  }
}

/** The JSON of a tool result as it was made, or undefined for any other value. */
export const encodedResult = (result: unknown): string | undefined =>
  typeof result === "object" && result !== null ? (result as ToolResult)[ENCODED] : undefined

/** A failed call as a tool result: the ErrorEnvelope with `isError`. */
const toErrorResult = (outcome: ExecutionOutcome & { ok: false }): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(toErrorResponse(outcome.error).envelope) }],
  isError: true
})

/**
 * A successful call's value as a tool result: the JSON text, and `structuredContent` with an output
 * schema, the value serialized once for both. Made within the execution (`encode`), so a value with
 * no JSON text fails the call with a 500 as it fails an HTTP request.
 */
const toToolResult = (tool: McpTool, result: unknown): ToolResult => {
  let value = result
  if (value === undefined) return { content: [] }
  let text: string | undefined
  try {
    text = JSON.stringify(value) as string | undefined
  } catch {
    // BigInt (SQL drivers) becomes a number or a string, as over HTTP; the structured content is the value as that text reads back.
    text = serializeJson(value)
    value = JSON.parse(text)
  }
  if (text === undefined) text = serializeJson(value)
  const content: ToolResult["content"] = [{ type: "text", text }]
  const textJson = `{"content":[{"type":"text","text":${JSON.stringify(text)}}]`
  if (tool.structured === "none") return { content, [ENCODED]: `${textJson}}` }
  if (tool.structured === "wrapped") {
    return { content, structuredContent: { [RESULT_FIELD]: value }, [ENCODED]: `${textJson},"structuredContent":{"${RESULT_FIELD}":${text}}}` }
  }
  return { content, structuredContent: value as Record<string, unknown>, [ENCODED]: `${textJson},"structuredContent":${text}}` }
}

/** Most rows of a streamed answer a tool result carries: a tool result is one message, not a stream. */
const MAX_STREAMED_ROWS = 1_000

/** A streamed answer as a tool result: its first rows, saying so when there were more (the stream is then cancelled). */
const toStreamedToolResult = (tool: McpTool, stream: RowStream): Promise<ToolResult> =>
  collectRows(stream, MAX_STREAMED_ROWS).then(({ rows, truncated }) => {
    const result = toToolResult(tool, rows)
    if (!truncated) return result
    const note = `Only the first ${MAX_STREAMED_ROWS} rows are given here; the answer has more. Its HTTP route streams all of them.`
    return {
      content: [...result.content, { type: "text", text: note }],
      ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent })
    }
  })

const hasKeys = (args: Readonly<Record<string, unknown>>): boolean => {
  for (const _key in args) return true
  return false
}

/**
 * The endpoint's input from a tool's arguments. No arguments read as an empty query string does, so
 * an endpoint that takes no input (a void schema) gets `undefined`, as over HTTP.
 */
const inputOf = (tool: McpTool, args: Readonly<Record<string, unknown>> | undefined): unknown => {
  if (tool.wrapsInput) return args?.[INPUT_FIELD]
  return args !== undefined && hasKeys(args) ? args : tool.plan.input.coerce({})
}

export const makeToolHandlers = (pipeline: PipelineService, catalogue: ToolCatalogue): ToolHandlers => {
  const requestFor = (plan: EndpointPlan, scope: McpScope): ServeRequest =>
    scope.request instanceof TransportRequest
      ? new AdapterToolRequest(scope.request, plan.info.method, plan.info.path)
      : new ToolRequest(scope.request, plan.info.method, plan.info.path)

  const callerFor = (tool: McpTool, request: ServeRequest): MaybePromise<ServeAuthContext | null> =>
    tool.public ? null : pipeline.authenticate(tool.plan.strategies, request, tool.plan.info)

  const admitted = async (tool: McpTool, scope: McpScope): Promise<boolean> => {
    try {
      return pipeline.admits(tool.key, await callerFor(tool, requestFor(tool.plan, scope)))
    } catch {
      // Credentials the endpoint's strategies refuse: the tool is not offered.
      return false
    }
  }

  return {
    list: async (scope) => {
      const visible = await Promise.all(catalogue.tools.map((tool) => admitted(tool, scope)))
      return catalogue.tools.filter((_, i) => visible[i]).map((tool) => tool.descriptor)
    },
    call: (scope, name, args) => {
      const tool = catalogue.byName.get(name)
      if (tool === undefined) return undefined
      const target = tool.route === undefined ? { key: tool.key, plan: tool.plan, input: inputOf(tool, args) } : tool.route(args ?? {})
      if (!("key" in target)) return toErrorResult({ ok: false, error: target })
      const outcome = pipeline.call(target.key, {
        request: requestFor(target.plan, scope),
        requestId: scope.requestId,
        transport: "mcp",
        input: target.input,
        // The endpoint's strategies run in its stages, told its endpoint, as for a request to its route.
        auth: tool.public ? null : undefined,
        encode: (value) => (value instanceof RowStream ? toStreamedToolResult(tool, value) : toToolResult(tool, value))
      })
      return andThen(outcome, (settled) => (settled.ok ? (settled.value as MaybePromise<ToolResult>) : toErrorResult(settled)))
    }
  }
}
