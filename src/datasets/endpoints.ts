/**
 * The datasets of an API as endpoints, so that they run through the same stages as every other:
 * global strategies, the dataset's guards, the tenant, middlewares (rate limits), the result cache,
 * metrics and events, timeouts and formats.
 * - `POST {basePath}/datasets/{name}` (key `dataset:{name}`) runs a query;
 * - `GET {basePath}/datasets/{name}` (key `datasets/{name}`) describes one dataset, behind the same guards;
 * - `GET {basePath}/datasets` (key `datasets`) lists the datasets the caller may query.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import type { AnyQueryConfig, ServeAuthContext, ServeContext, TenantConfig } from "../domain/config.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import { runGuards } from "../stages/guards.js"
import { tenantIdOf } from "../tenancy/tenantPlan.js"
import { datasetCatalogueEntry } from "./catalogue.js"
import { type CheckedDatasetQuery, checkDatasetQuery } from "./decode.js"
import type { SqlExecutor } from "./executor.js"
import type { DatasetModel } from "./model.js"
import { datasetQuerySchema } from "./querySchema.js"
import { runDatasetQuery } from "./run.js"
import { datasetScope } from "./scope.js"

/** What the endpoint key of a dataset's query route starts with. */
export const DATASET_QUERY_PREFIX = "dataset:"
/** The endpoint key of a dataset's query route: events, metrics and the result cache name it so. */
export const datasetQueryKey = (name: string): string => DATASET_QUERY_PREFIX + name
/** The endpoint key of a dataset's catalogue entry. */
export const datasetEntryKey = (name: string): string => `datasets/${name}`
/** The endpoint key of the catalogue. */
export const CATALOGUE_KEY = "datasets"

/** Whether an endpoint key is one of the datasets' routes (the catalogue, an entry, a query). */
export const isDatasetRoute = (key: string): boolean =>
  key === CATALOGUE_KEY || key.startsWith(`${CATALOGUE_KEY}/`) || key.startsWith(DATASET_QUERY_PREFIX)

const PAGE_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    limit: { type: "integer" },
    nextCursor: { type: ["string", "null"] },
    hasMore: { type: "boolean" }
  },
  required: ["limit", "nextCursor", "hasMore"]
}

/**
 * A Standard Schema over plain JSON: `check` validates, and `jsonSchema` describes the value for the
 * OpenAPI document and the MCP tools. Validating keeps the body as sent, so the result cache keys a
 * query by its text; the checked form is remembered beside it for the handler.
 */
const jsonValue = <A>(
  jsonSchema: JsonSchema,
  check: (value: unknown) => StandardSchemaV1.Result<A>
): StandardSchemaV1<A, A> & StandardJSONSchemaV1<A, A> => ({
  "~standard": {
    version: 1,
    vendor: "queryserve",
    validate: check,
    jsonSchema: { input: () => jsonSchema as Record<string, unknown>, output: () => jsonSchema as Record<string, unknown> }
  }
})

const asIs = <A>(value: unknown): StandardSchemaV1.Result<A> => ({ value: value as A })

/** What a query body checked into, for the handler that runs it (a body object the checker passed). */
const checkedBodies = new WeakMap<object, CheckedDatasetQuery>()

const queryInput = (dataset: DatasetModel) =>
  jsonValue<unknown>(datasetQuerySchema(dataset), (body) => {
    const checked = checkDatasetQuery(dataset, body)
    if (Either.isLeft(checked)) return { issues: checked.left.issues.map(({ message, path }) => ({ message, path: [...path] })) }
    if (typeof body === "object" && body !== null) checkedBodies.set(body, checked.right)
    return { value: body }
  })

const answerSchema = (dataset: DatasetModel): JsonSchema => {
  const fields = [...Object.keys(dataset.dimensions), ...Object.keys(dataset.measures)]
  return {
    type: "object",
    properties: {
      data: { type: "array", items: { type: "object", description: `Rows keyed by the fields asked for: ${fields.join(", ")}` } },
      page: PAGE_SCHEMA
    },
    required: ["data", "page"]
  }
}

/** What the datasets of one API need from it. */
interface DatasetServing {
  readonly datasets: ReadonlyMap<string, DatasetModel>
  readonly executor: SqlExecutor
  /** The API's tenant config: the tenant a dataset's rows are filtered on is the one it extracts. */
  readonly tenant: TenantConfig | undefined
}

/** A dataset's guards and tenancy, as every route of it applies them. */
const guarded = (dataset: DatasetModel): Pick<AnyQueryConfig, "requiredRoles" | "requiredScopes" | "tenant" | "mcp" | "tags"> => ({
  requiredRoles: dataset.roles,
  requiredScopes: dataset.scopes,
  // Fails closed: without a tenant only a caller the dataset's `allowUnscoped` names exactly `true` passes.
  tenant: dataset.tenantKey === undefined
    ? false
    : { mode: "manual", required: false, allowUnscoped: (auth) => dataset.allowUnscoped?.(auth) === true },
  // MCP offers datasets through list_datasets, describe_dataset and query_dataset instead.
  mcp: false,
  tags: ["datasets"]
})

/** The query configs of dataset queries: their answers are `{ data, page }` pages. */
const pageAnswering = new WeakSet<AnyQueryConfig>()

/** Whether a query config is a dataset's query route, whose answers are pages (CSV and NDJSON carry their rows). */
export const answersDatasetPages = (config: AnyQueryConfig): boolean => pageAnswering.has(config)

const queryConfig = (dataset: DatasetModel, executor: SqlExecutor): AnyQueryConfig => {
  const config: AnyQueryConfig = {
    ...guarded(dataset),
    method: "POST",
    path: `datasets/${dataset.name}`,
    summary: `Query the ${dataset.name} dataset`,
    description: dataset.description,
    cacheTtlMs: dataset.cacheTtlMs,
    inputSchema: queryInput(dataset),
    outputSchema: jsonValue(answerSchema(dataset), asIs),
    query: ({ input, ctx }: { readonly input: unknown; readonly ctx: ServeContext }) => {
      const known = typeof input === "object" && input !== null ? checkedBodies.get(input) : undefined
      const checked = known === undefined ? checkDatasetQuery(dataset, input) : Either.right(known)
      return Either.isLeft(checked)
        ? Effect.fail(checked.left)
        : runDatasetQuery(dataset, checked.right, { executor, tenantId: ctx.tenantId, auth: ctx.auth })
    }
  }
  pageAnswering.add(config)
  return config
}

const entryConfig = (dataset: DatasetModel): AnyQueryConfig => ({
  ...guarded(dataset),
  method: "GET",
  summary: `Describe the ${dataset.name} dataset`,
  query: () => datasetCatalogueEntry(dataset)
})

/** Whether `auth` may query `dataset`: its guards pass and it has a tenant, or may go without. */
const mayQuery = (dataset: DatasetModel, auth: ServeAuthContext | null, tenant: TenantConfig | undefined): boolean => {
  try {
    runGuards({ requiresAuth: false, requiredRoles: dataset.roles, requiredScopes: dataset.scopes }, auth)
  } catch {
    return false
  }
  const tenantId = tenant === undefined ? null : tenantIdOf(tenant.extract(auth))
  return Either.isRight(datasetScope(dataset, tenantId, auth))
}

const catalogueConfig = ({ datasets, tenant }: DatasetServing): AnyQueryConfig => ({
  method: "GET",
  summary: "The datasets the caller may query",
  tags: ["datasets"],
  tenant: false,
  mcp: false,
  query: ({ ctx }: { readonly ctx: ServeContext }) => ({
    datasets: [...datasets.values()].filter((dataset) => mayQuery(dataset, ctx.auth, tenant)).map(datasetCatalogueEntry)
  })
})

/** The query configs that serve `serving.datasets`, by endpoint key. */
export const datasetEndpoints = (serving: DatasetServing): ReadonlyMap<string, AnyQueryConfig> => {
  const endpoints = new Map<string, AnyQueryConfig>([[CATALOGUE_KEY, catalogueConfig(serving)]])
  for (const dataset of serving.datasets.values()) {
    endpoints.set(datasetEntryKey(dataset.name), entryConfig(dataset))
    endpoints.set(datasetQueryKey(dataset.name), queryConfig(dataset, serving.executor))
  }
  return endpoints
}
