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
}

/** `mcp` with its defaults applied. */
export type McpPlan = Required<Pick<McpOptions, "path">> & McpOptions

export const normalizeMcp = (mcp: boolean | McpOptions | undefined): McpPlan | undefined => {
  if (mcp === undefined || mcp === false) return undefined
  const options = mcp === true ? {} : mcp
  return { ...options, path: options.path ?? "/mcp" }
}

