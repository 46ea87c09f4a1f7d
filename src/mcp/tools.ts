import { dereference, type JsonSchema, typesOf } from "../domain/jsonSchema.js"
import type { ValidationError } from "../domain/errors.js"
import type { EndpointPlan, RoutePlan } from "../stages/plan.js"

/** A JSON Schema of an object, as MCP wants a tool's input and output schemas. */
type ObjectSchema = JsonSchema & { readonly type: "object" }

/** A tool as `tools/list` gives it (MCP's Tool). */
export interface ToolDescriptor {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: ObjectSchema
  readonly outputSchema?: ObjectSchema
  readonly annotations?: { readonly readOnlyHint: boolean }
}

/** One endpoint as an MCP tool, compiled once. */
export interface McpTool {
  readonly key: string
  readonly plan: EndpointPlan
  readonly descriptor: ToolDescriptor
  /**
   * The endpoint is public: its tool calls have no caller. Otherwise its strategies (the global ones
   * or its own) authenticate each call on the MCP request's headers, told the tool's endpoint, as
   * they would a request to its route.
   */
  readonly public: boolean
  /** The input schema admits no object: the tool's arguments carry the input as `input`. */
  readonly wrapsInput: boolean
  /** Results are given as `structuredContent` (there is an output schema), wrapped as `{ result }` when not an object. */
  readonly structured: "none" | "as-is" | "wrapped"
  /**
   * For a tool that serves several endpoints (the dataset tools): the endpoint a call's arguments
   * name and its input, or the refusal of arguments that name none. Without it, a call runs `key`.
   */
  readonly route?: (args: Readonly<Record<string, unknown>>) => ToolTarget | ValidationError
}

/** The endpoint one tool call runs, with its input. */
export interface ToolTarget {
  readonly key: string
  readonly plan: EndpointPlan
  readonly input: unknown
}

export interface ToolCatalogue {
  readonly tools: ReadonlyArray<McpTool>
  readonly byName: ReadonlyMap<string, McpTool>
}

/** The wrapper property of a non-object input, and of a non-object result. */
export const INPUT_FIELD = "input"
export const RESULT_FIELD = "result"

/**
 * A JSON Schema as the root of a tool's input or output, which MCP wants to be an object. A schema that
 * fits (`fits` its JSON types) is inlined at the root with `type: "object"`, references kept resolvable;
 * any other becomes the one required property `field`.
 */
const objectRoot = (
  schema: JsonSchema,
  field: string,
  fits: (types: ReadonlySet<string>) => boolean
): { readonly schema: ObjectSchema; readonly wrapped: boolean } => {
  // Tool schemas are 2020-12 by default; `$schema`, and a root `$id` (Effect names `{}` so), only make validators stumble.
  const { $schema: _dialect, $id: _id, ...body } = schema
  if (fits(typesOf(body, body))) {
    const { $defs } = body
    return { schema: { ...dereference(body, body), ...($defs === undefined ? {} : { $defs }), type: "object" }, wrapped: false }
  }
  const { $defs, ...inner } = body
  return {
    schema: { type: "object", properties: { [field]: inner }, required: [field], ...($defs === undefined ? {} : { $defs }) },
    wrapped: true
  }
}

// Arguments are always an object: an input schema that admits objects (or says nothing) takes them as they are.
const admitsObjects = (types: ReadonlySet<string>): boolean => types.size === 0 || types.has("object")
// Structured content must be an object: only an output that is always one is given as it is.
const onlyObjects = (types: ReadonlySet<string>): boolean => types.size === 1 && types.has("object")

/** MCP tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`; other characters of a key become `_`. */
const toolName = (key: string, taken: { has(name: string): boolean }): string => {
  const base = key.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120) || "tool"
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`
  return name
}

const describeTool = (plan: EndpointPlan, name: string) => {
  const { summary, description } = plan.info
  const text = [summary, description].filter((part) => part !== undefined && part.length > 0).join("\n\n")
  return {
    ...(summary === undefined ? {} : { title: summary }),
    ...(text.length === 0 ? {} : { description: text }),
    name
  }
}

const compileTool = (plan: EndpointPlan, name: string): McpTool => {
  const input = objectRoot(plan.input.jsonSchema() ?? {}, INPUT_FIELD, admitsObjects)
  const outputJson = plan.output.jsonSchema()
  const output = outputJson === undefined ? undefined : objectRoot(outputJson, RESULT_FIELD, onlyObjects)
  return {
    key: plan.info.key,
    plan,
    descriptor: {
      ...describeTool(plan, name),
      inputSchema: input.schema,
      ...(output === undefined ? {} : { outputSchema: output.schema }),
      ...(plan.info.method === "GET" ? { annotations: { readOnlyHint: true } } : {})
    },
    public: plan.strategies.length === 0,
    wrapsInput: input.wrapped,
    structured: output === undefined ? "none" : output.wrapped ? "wrapped" : "as-is"
  }
}

/** One tool per endpoint (extra `route`s of an endpoint add none), in definition order; `mcp: false` ones left out. */
export const endpointTools = (routes: ReadonlyArray<RoutePlan>): Map<string, McpTool> => {
  const byName = new Map<string, McpTool>()
  const seen = new Set<string>()
  for (const { endpoint } of routes) {
    if (seen.has(endpoint.info.key)) continue
    seen.add(endpoint.info.key)
    if (endpoint.config.mcp === false) continue
    const tool = compileTool(endpoint, toolName(endpoint.info.key, byName))
    byName.set(tool.descriptor.name, tool)
  }
  return byName
}
