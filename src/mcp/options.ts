/** `mcp` of a ServeConfig: the Model Context Protocol endpoint that serves the endpoints as tools. */
export interface McpOptions {
  /** Under `basePath`. Default `/mcp`. */
  readonly path?: string
  /** The server name agents see. Default: the OpenAPI or docs title, else "queryserve". */
  readonly name?: string
  /** The server version agents see. Default: the OpenAPI document's version, else "1.0.0". */
  readonly version?: string
  /** Text telling agents how to use the tools (MCP's `instructions`). */
  readonly instructions?: string
  /**
   * Most JSON-RPC messages one HTTP request may carry (default 10). A longer batch is refused whole
   * (400, a JSON-RPC error, none of it run): limits that count HTTP requests would see it as one.
   */
  readonly maxBatch?: number
}

const DEFAULT_MAX_BATCH = 10

/** `mcp` with its defaults applied. */
export type McpPlan = Required<Pick<McpOptions, "path" | "maxBatch">> & McpOptions

export const normalizeMcp = (mcp: boolean | McpOptions | undefined): McpPlan | undefined => {
  if (mcp === undefined || mcp === false) return undefined
  const options = mcp === true ? {} : mcp
  const maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH
  if (!(Number.isInteger(maxBatch) && maxBatch >= 1)) throw new TypeError(`mcp.maxBatch must be a whole number of messages, at least 1 (e.g. 10), not ${maxBatch}.`)
  return { ...options, path: options.path ?? "/mcp", maxBatch }
}

