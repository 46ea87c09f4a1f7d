import {
  type InfiniteData,
  useInfiniteQuery as useTanStackInfiniteQuery,
  type UseInfiniteQueryOptions,
  type UseInfiniteQueryResult,
  useQuery as useTanStackQuery,
  type UseQueryOptions,
  type UseQueryResult
} from "@tanstack/react-query"
import { type ClientOptions, createTransport, type DatasetsOf, type QueriesOf } from "../client/createClient.js"
import type { DatasetQuery as DatasetQueryOf, DatasetResult } from "../datasets/query.js"
import type { DatasetAnswer, DatasetQuery } from "../client/DatasetQuery.js"
import type { Page } from "../client/Page.js"
import type { ServeClientError } from "../client/ServeClientError.js"
import type { ServeQueriesMap } from "../domain/config.js"
import type { QueryInput, QueryOutput, TakesNothing } from "../facade/types.js"
import { datasetKeyOf, pagesKeyOf, queryKeyOf } from "./queryKeys.js"
import { useRetry } from "./retry.js"

/** TanStack's options of a query, less what the hook makes itself. */
export type HookQueryOptions<TData, TSelected, TKey extends ReadonlyArray<unknown>> = Omit<
  UseQueryOptions<TData, ServeClientError, TSelected, TKey>,
  "queryKey" | "queryFn"
>

/** TanStack's options of an infinite query, less what the hook makes itself (the key, the function and the cursors). */
export type HookInfiniteQueryOptions<TPage, TSelected, TKey extends ReadonlyArray<unknown>> = Omit<
  UseInfiniteQueryOptions<TPage, ServeClientError, TSelected, TKey, string | undefined>,
  "queryKey" | "queryFn" | "initialPageParam" | "getNextPageParam" | "getPreviousPageParam"
>

/** The keys of the queries whose answer is a page: `{ data, page: { limit, nextCursor, hasMore } }`. */
export type PaginatedKey<Q> = { [K in keyof Q & string]: QueryOutput<Q[K]> extends Page<unknown> ? K : never }[keyof Q & string]

/** What `useInfiniteQuery` takes as input: the query's, less the `cursor` the hook sets for each page. */
export type PagesInput<I> = Omit<I, "cursor">

/** The input, optional when the query needs none, then the options. */
type InputThenOptions<I, O> = TakesNothing<I> extends true ? [input?: I, options?: O] : [input: I, options?: O]

/** The pages `useInfiniteQuery` holds: each a `{ data, page }` answer, with the cursor that asked for it. */
export type Pages<TPage> = InfiniteData<TPage, string | undefined>

/** `useDataset` for an API whose type does not say its datasets: name, query and rows loosely typed. */
type UntypedUseDataset = <TSelected = DatasetAnswer>(
  name: string,
  query: DatasetQuery,
  options?: HookQueryOptions<DatasetAnswer, TSelected, readonly [`dataset:${string}`, DatasetQuery]>
) => UseQueryResult<TSelected, ServeClientError>

/** `useDataset` for an API with datasets: their names, fields named by the model, rows typed by the query. */
type TypedUseDataset<D> = <N extends keyof D & string, const DQ extends DatasetQueryOf<D[N]>, TSelected = DatasetResult<D[N], DQ>>(
  name: N,
  query: DQ,
  options?: HookQueryOptions<DatasetResult<D[N], DQ>, TSelected, readonly [`dataset:${N}`, DQ]>
) => UseQueryResult<TSelected, ServeClientError>

export interface ServeHooks<Q, D = {}> {
  /** One query's answer, cached under `[key, input]`. */
  readonly useQuery: <K extends keyof Q & string, TSelected = QueryOutput<Q[K]>>(
    key: K,
    ...args: InputThenOptions<QueryInput<Q[K]>, HookQueryOptions<QueryOutput<Q[K]>, TSelected, readonly [K, QueryInput<Q[K]>]>>
  ) => UseQueryResult<TSelected, ServeClientError>
  /**
   * A paginated query's pages, cached under `[key, input, "pages"]`: the first asked with `input`, each
   * next one with `input` and `cursor` set to the last page's `page.nextCursor`, while `page.hasMore`.
   */
  readonly useInfiniteQuery: <K extends PaginatedKey<Q>, TSelected = Pages<QueryOutput<Q[K]>>>(
    key: K,
    ...args: InputThenOptions<
      PagesInput<QueryInput<Q[K]>>,
      HookInfiniteQueryOptions<QueryOutput<Q[K]>, TSelected, readonly [K, PagesInput<QueryInput<Q[K]>>, "pages"]>
    >
  ) => UseInfiniteQueryResult<TSelected, ServeClientError>
  /** A dataset's answer to `query` (`POST {baseUrl}/datasets/{name}`), cached under `["dataset:" + name, query]`. */
  readonly useDataset: [keyof D] extends [never] ? UntypedUseDataset : TypedUseDataset<D>
}

const isPage = (answer: unknown): answer is Page<unknown> => {
  const page = typeof answer === "object" && answer !== null ? (answer as { page?: unknown }).page : undefined
  return typeof page === "object" && page !== null && typeof (page as { hasMore?: unknown }).hasMore === "boolean"
}

/**
 * React hooks over TanStack Query for an API defined with `defineServe`: `createHooks<typeof api>({
 * baseUrl })`. They send through the typed client's request path (methods from `methods` or the OpenAPI
 * document, loaded once per `createHooks`), use the QueryClient of the surrounding QueryClientProvider,
 * fail with `ServeClientError`, and pass TanStack's abort signal on, so a query no component needs any
 * more ends its request.
 */
export const createHooks = <TApi extends { readonly queries: ServeQueriesMap }>(
  options: ClientOptions<QueriesOf<TApi>>
): ServeHooks<QueriesOf<TApi>, DatasetsOf<TApi>> => {
  const transport = createTransport(options)

  /** A query whose answer `ask` fetches, aborted by TanStack's signal. */
  const useAnswer = <TData>(
    queryKey: ReadonlyArray<unknown>,
    ask: (signal: AbortSignal) => Promise<TData>,
    queryOptions: HookQueryOptions<TData, unknown, ReadonlyArray<unknown>> | undefined
  ) =>
    useTanStackQuery({
      ...queryOptions,
      queryKey,
      queryFn: ({ signal }) => ask(signal),
      retry: useRetry(queryKey, queryOptions?.retry)
    })

  const useQuery = (key: string, input?: unknown, queryOptions?: HookQueryOptions<unknown, unknown, ReadonlyArray<unknown>>) =>
    useAnswer(queryKeyOf(key, input), (signal) => transport.call(key, input, { signal }), queryOptions)

  const useInfiniteQuery = (
    key: string,
    input?: object,
    queryOptions?: HookInfiniteQueryOptions<Page<unknown>, unknown, ReadonlyArray<unknown>>
  ) => {
    const queryKey = pagesKeyOf(key, input)
    return useTanStackInfiniteQuery({
      ...queryOptions,
      queryKey,
      queryFn: async ({ pageParam, signal }) => {
        const answer = await transport.call(key, pageParam === undefined ? input : { ...input, cursor: pageParam }, { signal })
        if (!isPage(answer)) throw new TypeError(`useInfiniteQuery: "${key}" answered without a page ({ data, page }): it is not paginated`)
        return answer
      },
      initialPageParam: undefined,
      getNextPageParam: (last) => (last.page.hasMore ? last.page.nextCursor ?? undefined : undefined),
      retry: useRetry(queryKey, queryOptions?.retry)
    })
  }

  const useDataset = (name: string, query: DatasetQuery, queryOptions?: HookQueryOptions<DatasetAnswer, unknown, ReadonlyArray<unknown>>) =>
    useAnswer(datasetKeyOf(name, query), (signal) => transport.queryDataset(name, query, { signal }), queryOptions)

  return { useQuery, useInfiniteQuery, useDataset } as unknown as ServeHooks<QueriesOf<TApi>, DatasetsOf<TApi>>
}
