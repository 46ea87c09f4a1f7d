/**
 * The JSON Schema (draft 2020-12) of a dataset's query body, with the model's fields and grains as
 * enums: what OpenAPI documents and MCP gives agents. The decoder is the authority; this schema
 * describes the same rules.
 */
import type { JsonSchema } from "../domain/jsonSchema.js"
import type { DatasetModel } from "./dataset.js"
import { DEFAULT_LIMIT, DIRECTIONS, MAX_LIMIT } from "./decode.js"
import { dimensionFieldNames, measureFieldNames } from "./fields.js"
import { type FieldKind, MAX_LIST_VALUES, OPS_BY_KIND } from "./filterOps.js"

const VALUE_SCHEMAS: Readonly<Record<FieldKind, JsonSchema>> = {
  string: { type: "string" },
  number: { type: "number" },
  boolean: { type: "boolean" },
  time: {
    type: "string",
    pattern: "^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?)?$",
    description: "ISO date or date-time, without a time zone"
  },
  measure: { type: "number" }
}

/** The value each op takes, given the schema of one value of the field's kind. */
const valueOf = (op: string, one: JsonSchema): JsonSchema => {
  switch (op) {
    case "in":
    case "notIn":
      return { type: "array", items: one, minItems: 1, maxItems: MAX_LIST_VALUES }
    case "between":
      return { type: "array", prefixItems: [one, one], items: false, minItems: 2, description: "[from, to], inclusive" }
    case "contains":
      return { type: "string", description: "found literally, case-sensitive" }
    case "isNull":
      return { type: "boolean", description: "true: is null; false: is not null" }
    default:
      return one
  }
}

/** The fields of each kind: `day`, `day.month`… for time; the measures. */
const fieldsByKind = (dataset: DatasetModel): ReadonlyArray<readonly [FieldKind, ReadonlyArray<string>]> => {
  const dimensions = dimensionFieldNames(dataset)
  const kindOf = (name: string): FieldKind => dataset.dimensions[name.split(".")[0]!]!.kind
  const kinds: ReadonlyArray<FieldKind> = ["string", "number", "boolean", "time"]
  return [
    ...kinds.map((kind) => [kind, dimensions.filter((name) => kindOf(name) === kind)] as const),
    ["measure", measureFieldNames(dataset)] as const
  ].filter(([, names]) => names.length > 0)
}

const filterSchema = (dataset: DatasetModel): JsonSchema => ({
  anyOf: fieldsByKind(dataset).flatMap(([kind, names]) =>
    OPS_BY_KIND[kind].map((op) => ({
      type: "object",
      properties: { field: { enum: names }, op: { const: op }, value: valueOf(op, VALUE_SCHEMAS[kind]) },
      required: ["field", "op", "value"],
      additionalProperties: false
    }))
  )
})

const nonEmpty = (key: string): JsonSchema => ({ required: [key], properties: { [key]: { minItems: 1 } } })

export const datasetQuerySchema = (dataset: DatasetModel): JsonSchema => {
  const dimensions = dimensionFieldNames(dataset)
  const measures = measureFieldNames(dataset)
  const list = (names: ReadonlyArray<string>, description: string): JsonSchema => ({
    type: "array",
    items: names.length > 0 ? { enum: names } : false,
    uniqueItems: true,
    description
  })
  return {
    type: "object",
    description: `A query of dataset "${dataset.name}": at least one dimension or measure.`,
    properties: {
      dimensions: list(dimensions, "Group by these; a time dimension at a grain as `name.grain`, bare = by day."),
      measures: list(measures, "Aggregate these per group."),
      filters: { type: "array", items: filterSchema(dataset), description: "All must hold; a filter on a measure filters groups." },
      orderBy: {
        type: "array",
        items: {
          type: "object",
          properties: { field: { enum: [...dimensions, ...measures] }, direction: { enum: DIRECTIONS, default: "asc" } },
          required: ["field"],
          additionalProperties: false
        },
        description: "Fields the query asks for; then the remaining dimensions ascending."
      },
      limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      cursor: { type: "string", description: "page.nextCursor of the previous page of the same query." }
    },
    additionalProperties: false,
    anyOf: [nonEmpty("dimensions"), nonEmpty("measures")]
  }
}
