/**
 * Paginated endpoints: the `limit` and `cursor` inputs beside the endpoint's own, `ctx.page` for the
 * handler, and the `{ data, page }` answer. Compiled once per endpoint around its schemas and handler.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { canonicalJson } from "../domain/canonicalJson.js"
import type { PaginateOptions, ServeContext } from "../domain/config.js"
import { ValidationError } from "../domain/errors.js"
import type { QueryParams, ServeRequest } from "../domain/http.js"
import type { JsonSchema } from "../domain/jsonSchema.js"
import { andThen, isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import { emptyRecord } from "../domain/queryString.js"
import type { CompiledSchema } from "../domain/schema.js"
import { RequestContext } from "../stages/context.js"
import { type Invoker, isEffect } from "../stages/invoke.js"
import type { PagePlan } from "../stages/plan.js"
import { isRowSource, takeRows } from "../stages/rowSource.js"
import { decodeCursor } from "./cursor.js"
import { pageOf } from "./page.js"

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 1

/** The page sizes of `paginate`, checked at define time: a size that is no count of rows would fail every request. */
export const pagePlanOf = (key: string, options: PaginateOptions | undefined): PagePlan | undefined => {
  if (options === undefined) return undefined
  const defaultLimit = options.defaultLimit ?? DEFAULT_LIMIT
  const maxLimit = options.maxLimit ?? Math.max(MAX_LIMIT, defaultLimit)
  if (!isCount(defaultLimit) || !isCount(maxLimit) || defaultLimit > maxLimit) {
    throw new TypeError(
      `query "${key}": paginate takes whole numbers 1 ≤ defaultLimit ≤ maxLimit, not defaultLimit ${String(defaultLimit)} and maxLimit ${String(maxLimit)}`
    )
  }
  return { defaultLimit, maxLimit }
}

type Values = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Values =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const hasKeys = (value: Values): boolean => {
  for (const _key in value) return true
  return false
}

/** What a cursor is bound to: the endpoint and every input but `limit` and `cursor`. */
const bindingOf = (key: string, input: Values): string => {
  const { limit: _limit, cursor: _cursor, ...rest } = input
  let text: string
  try {
    text = canonicalJson(rest)
  } catch {
    // An input a cache key cannot hold (a class instance a transformation made) is bound by its JSON text.
    text = JSON.stringify(rest) ?? ""
  }
  return `${key}\n${text}`
}

const limitRefused = (message: string): ValidationError =>
  new ValidationError({ message: "Invalid limit", issues: [{ path: ["limit"], message }] })

/** The `limit` sent (a number, or its text from a query string or form), or the default. */
const limitOf = (plan: PagePlan, sent: unknown): number => {
  if (sent === undefined) return plan.defaultLimit
  const limit = typeof sent === "string" && /^\d{1,16}$/.test(sent) ? Number(sent) : sent
  if (!isCount(limit)) throw limitRefused("expected a whole number of rows, 1 or more")
  if (limit > plan.maxLimit) throw limitRefused(`is at most ${plan.maxLimit}`)
  return limit
}

/**
 * The endpoint's input with `limit` and `cursor` beside it. The decoded input carries `limit` (the
 * default applied) and the `cursor` sent, so the result cache tells pages apart; a cursor altered,
 * or sent with other inputs than the ones it was given for, is refused here, before any middleware.
 */
export const pagedInput = (key: string, plan: PagePlan, input: CompiledSchema): CompiledSchema => {
  let jsonSchema: JsonSchema | undefined
  return {
    decode: (value) => {
      const sent = isRecord(value) ? value : emptyRecord()
      const { limit: sentLimit, cursor, ...rest } = sent
      const limit = limitOf(plan, sentLimit)
      if (cursor !== undefined && typeof cursor !== "string") {
        throw new ValidationError({ message: "Invalid cursor", issues: [{ path: ["cursor"], message: "expected the text of page.nextCursor" }] })
      }
      // Without inputs of its own, the endpoint's input is what a request without any reads as.
      const own = isRecord(value) ? (hasKeys(rest) ? rest : input.coerce(emptyRecord())) : value
      return andThen(input.decode(own), (decoded) => {
        const paged: Record<string, unknown> = { ...(isRecord(decoded) ? decoded : {}), limit }
        if (cursor !== undefined) {
          const offset = decodeCursor(cursor, bindingOf(key, paged))
          if (Either.isLeft(offset)) throw offset.left
          paged.cursor = cursor
        }
        return paged
      })
    },
    encode: input.encode,
    coerce: (params) => {
      const { limit, cursor, ...rest } = params
      const own = input.coerce(rest)
      if (limit === undefined && cursor === undefined) return own
      return { ...(isRecord(own) ? own : {}), limit, cursor }
    },
    jsonSchema: () => (jsonSchema ??= withPageInputs(input.jsonSchema(), plan))
  }
}

const withPageInputs = (own: JsonSchema | undefined, plan: PagePlan): JsonSchema => {
  const base = (own ?? { type: "object" }) as Record<string, unknown>
  return {
    ...base,
    properties: {
      ...(base.properties as Record<string, unknown> | undefined),
      limit: {
        type: "integer",
        minimum: 1,
        maximum: plan.maxLimit,
        default: plan.defaultLimit,
        description: `Rows per page (at most ${plan.maxLimit})`
      },
      cursor: { type: "string", description: "page.nextCursor of the previous page" }
    }
  } as JsonSchema
}

const PAGE_SCHEMA = {
  type: "object",
  required: ["limit", "nextCursor", "hasMore"],
  properties: {
    limit: { type: "integer", minimum: 1 },
    nextCursor: { type: ["string", "null"], description: "The cursor of the next page; null on the last one" },
    hasMore: { type: "boolean" }
  }
}

/**
 * The page's schema, the rows' schema as its `data`. The rows' definitions move to the root, where
 * their `#/$defs/...` references resolve; `$schema` and `$id` are for a root only (a nested `$id`
 * would even change what the references resolve against).
 */
const pageSchema = (rows: JsonSchema | undefined): JsonSchema => {
  const { $schema: _dialect, $id: _id, $defs, definitions, ...data } = rows ?? { type: "array" }
  return {
    type: "object",
    required: ["data", "page"],
    properties: { data, page: PAGE_SCHEMA },
    ...($defs === undefined ? {} : { $defs }),
    ...(definitions === undefined ? {} : { definitions })
  }
}

/** The endpoint's output as the `data` of a page. */
export const pagedOutput = (output: CompiledSchema): CompiledSchema => {
  let jsonSchema: JsonSchema | undefined
  return {
    decode: output.decode,
    encode: (value) => {
      if (!isRecord(value)) return output.encode(value)
      const page = value.page
      return andThen(output.encode(value.data), (data) => ({ data, page }))
    },
    coerce: output.coerce,
    jsonSchema: () => (jsonSchema ??= pageSchema(output.jsonSchema()))
  }
}

/** The query string of the next page: the request's own, with `cursor` replaced. */
const nextLink = (request: ServeRequest, cursor: string): string => {
  const params = new URLSearchParams()
  const query: QueryParams = request.query ?? emptyRecord()
  for (const name of Object.keys(query)) {
    if (name === "cursor") continue
    const value = query[name]!
    for (const each of typeof value === "string" ? [value] : value) params.append(name, each)
  }
  params.append("cursor", cursor)
  return `<${request.path}?${params.toString()}>; rel="next"`
}

/**
 * The handler with `ctx.page` set from the decoded `limit` and `cursor`, and its rows (an array, or a
 * source of which `limit + 1` rows are read) made the page. A GET's answer with more rows names the
 * next page in `Link`.
 */
export const pagedInvoker = (key: string, invoke: Invoker): Invoker => (input, ctx: ServeContext) => {
  const values = input as Values & { readonly limit: number; readonly cursor?: string }
  const limit = values.limit
  const binding = bindingOf(key, values)
  const offset = values.cursor === undefined ? 0 : Either.getOrThrow(decodeCursor(values.cursor, binding))
  const request = RequestContext.of(ctx)
  request.page = { limit, offset }
  const toPage = (rows: unknown): MaybePromise<unknown> => {
    if (isRowSource(rows)) return takeRows(rows, limit + 1).then(toPage)
    if (!Array.isArray(rows)) throw new TypeError(`query "${key}" is paginated: its handler gives an array of rows (or a stream of them), not a ${typeof rows}`)
    const answer = pageOf(rows, limit, offset, binding)
    const method = ctx.request.method
    if (answer.page.nextCursor !== null && (method === "GET" || method === "HEAD")) {
      request.setHeader("link", nextLink(ctx.request, answer.page.nextCursor))
    }
    return answer
  }
  const result = invoke(input, ctx)
  if (isEffect(result)) return Effect.map(result, toPage)
  return isPromiseLike(result) ? Promise.resolve(result).then(toPage) : toPage(result)
}
