import type { RoutePlan } from "../stages/plan.js"
import { datasetTools } from "./datasetTools.js"
import { endpointTools, type ToolCatalogue } from "./tools.js"

/** The MCP tools of an API: one per endpoint, then the three dataset tools when it serves datasets. */
export const buildCatalogue = (routes: ReadonlyArray<RoutePlan>): ToolCatalogue => {
  const tools = endpointTools(routes)
  for (const tool of datasetTools(routes)) tools.set(tool.descriptor.name, tool)
  return { tools: [...tools.values()], byName: tools }
}
