import type { DatasetQuery } from "../client/DatasetQuery.js"

// The keys under which the hooks cache their answers, for reading, setting, invalidating or
// prefetching them with the QueryClient. A key's first element alone matches all of its variants.

/** `useQuery(key, input)`'s key. */
export const queryKeyOf = <K extends string, I>(key: K, input: I): readonly [K, I] => [key, input]

/** `useInfiniteQuery(key, input)`'s key: the pages of one input are cached as one entry. */
export const pagesKeyOf = <K extends string, I>(key: K, input: I): readonly [K, I, "pages"] => [key, input, "pages"]

/** `useDataset(name, query)`'s key. */
export const datasetKeyOf = <N extends string>(name: N, query: DatasetQuery): readonly [`dataset:${N}`, DatasetQuery] =>
  [`dataset:${name}`, query]
