/**
 * The datasets as three MCP tools: `list_datasets`, `describe_dataset` (`{ name }`) and
 * `query_dataset` (`{ name, …query }`). Each call runs the dataset's own endpoint, so it keeps that
 * endpoint's guards, tenancy, rate limits and events; an agent asks any question the model allows
 * instead of only the ones an endpoint was written for.
 */
import { CATALOGUE_KEY, datasetEntryKey, datasetQueryKey } from "../datasets/endpoints.js"
import { ValidationError } from "../domain/errors.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import type { EndpointPlan, RoutePlan } from "../stages/plan.js"
import type { McpTool, ToolTarget } from "./tools.js"

const NAME_PREFIX = datasetQueryKey("")

const objectSchema = (properties: Readonly<Record<string, JsonSchema>>, required: ReadonlyArray<string>) =>
  ({ type: "object", properties, required: [...required] }) as const

/** The dataset a call names, or the refusal that lists the ones there are. */
const named = (args: Readonly<Record<string, unknown>>, names: ReadonlyArray<string>): string | ValidationError => {
  const name = args.name
  if (typeof name === "string" && names.includes(name)) return name
  return new ValidationError({
    message: "Invalid input",
    issues: [{ path: ["name"], message: `Expected one of the datasets ${names.map((n) => JSON.stringify(n)).join(", ")}` }]
  })
}

const withoutName = ({ name: _name, ...query }: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => query

/** The three dataset tools, when the API serves datasets (their catalogue endpoint is among the routes). */
export const datasetTools = (routes: ReadonlyArray<RoutePlan>): ReadonlyArray<McpTool> => {
  const plans = new Map<string, EndpointPlan>(routes.map(({ endpoint }) => [endpoint.info.key, endpoint]))
  const catalogue = plans.get(CATALOGUE_KEY)
  if (catalogue === undefined) return []
  const names = [...plans.keys()].filter((key) => key.startsWith(NAME_PREFIX)).map((key) => key.slice(NAME_PREFIX.length))
  const nameSchema: JsonSchema = { type: "string", enum: names, description: "The dataset's name, as list_datasets gives it" }
  const target = (key: string, input: unknown): ToolTarget => ({ key, plan: plans.get(key)!, input })
  const tool = (
    name: string,
    description: string,
    inputSchema: ReturnType<typeof objectSchema>,
    route: (args: Readonly<Record<string, unknown>>) => ToolTarget | ValidationError
  ): McpTool => ({
    key: CATALOGUE_KEY,
    plan: catalogue,
    descriptor: { name, description, inputSchema, annotations: { readOnlyHint: true } },
    public: catalogue.strategies.length === 0,
    wrapsInput: false,
    structured: "as-is",
    route
  })
  return [
    tool(
      "list_datasets",
      "The datasets you may query, each with its dimensions (time ones with their grains), measures and filter operators.",
      objectSchema({}, []),
      () => target(CATALOGUE_KEY, {})
    ),
    tool("describe_dataset", "One dataset's dimensions, measures and filter operators.", objectSchema({ name: nameSchema }, ["name"]), (args) => {
      const name = named(args, names)
      return typeof name === "string" ? target(datasetEntryKey(name), {}) : name
    }),
    tool(
      "query_dataset",
      "Asks a dataset a question: `dimensions` to group by (a time one with its grain, as \"day.month\"), " +
        "`measures` to compute, `filters` ({ field, op, value }), `orderBy`, `limit` and the `cursor` of the next page. " +
        "Answers { data, page }.",
      objectSchema(
        {
          name: nameSchema,
          dimensions: { type: "array", items: { type: "string" } },
          measures: { type: "array", items: { type: "string" } },
          filters: { type: "array", items: { type: "object" } },
          orderBy: { type: "array", items: { type: "object" } },
          limit: { type: "integer", minimum: 1, maximum: 10_000 },
          cursor: { type: "string" }
        },
        ["name"]
      ),
      (args) => {
        const name = named(args, names)
        return typeof name === "string" ? target(datasetQueryKey(name), withoutName(args)) : name
      }
    )
  ]
}
