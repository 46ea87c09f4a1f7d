/** The define-time checks of a dataset model: every mistake thrown as an Error that says what to change. */
import { DIMENSION_KINDS } from "./dimension.js"
import { checkIdentifier, isPlainIdentifier } from "./identifier.js"
import { AGGREGATIONS } from "./measure.js"
import type { DatasetConfig, Dimensions, Measures } from "./model.js"

type AnyRecord = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is AnyRecord => typeof value === "object" && value !== null && !Array.isArray(value)

const describe = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value) : String(value))

/** Every field of `fields` carries one of `tags` under `tagKey`: it was made by one of `what`'s constructors. */
const checkMade = (
  fail: (message: string) => never,
  what: "dimension" | "measure",
  fields: unknown,
  tagKey: "kind" | "aggregation",
  tags: ReadonlyArray<string>
): AnyRecord => {
  const makers = `${what}.${tags.join(`(), ${what}.`)}()`
  if (!isRecord(fields)) fail(`${what}s must be an object of ${makers}`)
  for (const [key, field] of Object.entries(fields)) {
    if (!tags.includes(String(isRecord(field) ? field[tagKey] : undefined))) fail(`${what} ${JSON.stringify(key)} must be made with ${makers}`)
  }
  return fields
}

const checkMeasures = (fail: (message: string) => never, measures: AnyRecord): void => {
  for (const [key, measure] of Object.entries(measures)) {
    const aggregation: unknown = isRecord(measure) ? measure.aggregation : undefined
    if (aggregation !== "ratio") continue
    const ratio = measure as AnyRecord
    for (const part of ["numerator", "denominator"] as const) {
      const named = Object.hasOwn(measures, String(ratio[part])) ? measures[String(ratio[part])] : undefined
      if (!isRecord(named) || ratio[part] === key) {
        fail(`ratio ${JSON.stringify(key)}: its ${part} ${describe(ratio[part])} is not another measure of the dataset`)
      }
      if (named.aggregation === "ratio") fail(`ratio ${JSON.stringify(key)}: its ${part} ${describe(ratio[part])} is a ratio; name a column measure`)
    }
  }
}

/** Every name and column of the model, checked; field names unique even ignoring case (DuckDB ignores it). */
const checkNames = (name: string, dimensions: Dimensions, measures: Measures): void => {
  const seen = new Map<string, string>()
  const field = (kind: string, key: string, column: unknown): void => {
    checkIdentifier(name, `the ${kind} name`, key)
    if (column !== undefined) checkIdentifier(name, `the column of ${kind} ${JSON.stringify(key)}`, column)
    const other = seen.get(key.toLowerCase())
    if (other !== undefined) {
      throw new Error(`dataset ${JSON.stringify(name)}: ${kind} ${JSON.stringify(key)} has the name of ${other}; field names must differ (ignoring case)`)
    }
    seen.set(key.toLowerCase(), `${kind} ${JSON.stringify(key)}`)
  }
  for (const [key, dimension] of Object.entries(dimensions)) field("dimension", key, dimension.column)
  for (const [key, measure] of Object.entries(measures)) field("measure", key, measure.aggregation === "ratio" ? undefined : measure.column)
  if (seen.size === 0) throw new Error(`dataset ${JSON.stringify(name)}: define at least one dimension or measure`)
}

const checkGuards = (fail: (message: string) => never, config: DatasetConfig<Dimensions, Measures>): void => {
  for (const list of ["roles", "scopes"] as const) {
    const names: unknown = config[list]
    if (names !== undefined && !(Array.isArray(names) && names.every((n) => typeof n === "string" && n.length > 0))) {
      fail(`${list} must be a list of non-empty names`)
    }
  }
  const ttl: unknown = config.cacheTtlMs
  if (ttl !== undefined && !(typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0)) fail(`cacheTtlMs must be a number of milliseconds ≥ 0, not ${describe(ttl)}`)
  if (config.allowUnscoped !== undefined && typeof config.allowUnscoped !== "function") {
    fail("allowUnscoped must be a function of the caller returning true or false")
  }
}

export const checkModel = (name: string, config: DatasetConfig<Dimensions, Measures>): void => {
  if (!isPlainIdentifier(name)) checkIdentifier(String(name), "the dataset name", name)
  const fail = (message: string): never => {
    throw new Error(`dataset ${JSON.stringify(name)}: ${message}`)
  }
  if (!isRecord(config)) fail("the second argument must be the dataset's config object")
  if (typeof config.source !== "string") fail("source must name a table or view")
  config.source.split(".").forEach((part) => checkIdentifier(name, "each part of source", part))
  if (config.source.split(".").length > 2) fail(`source must be "table" or "schema.table", not ${JSON.stringify(config.source)}`)
  if (config.tenantKey !== undefined) checkIdentifier(name, "tenantKey", config.tenantKey)
  if (config.description !== undefined && typeof config.description !== "string") fail("description must be text")
  checkMade(fail, "dimension", config.dimensions, "kind", DIMENSION_KINDS)
  checkMeasures(fail, checkMade(fail, "measure", config.measures, "aggregation", AGGREGATIONS))
  checkNames(name, config.dimensions, config.measures)
  checkGuards(fail, config)
}
