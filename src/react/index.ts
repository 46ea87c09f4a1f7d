/**
 * `queryserve/react`: React hooks over TanStack Query v5 for an API defined with `defineServe`.
 * React and `@tanstack/react-query` are peer dependencies this entry alone needs.
 */
export type { DatasetAnswer, DatasetFilterOp, DatasetQuery, DatasetRow } from "../client/DatasetQuery.js"
export type { Page, PageInfo } from "../client/Page.js"
export { createHooks } from "./createHooks.js"
export type { HookInfiniteQueryOptions, HookQueryOptions, Pages, PagesInput, PaginatedKey, ServeHooks } from "./createHooks.js"
export { datasetKeyOf, pagesKeyOf, queryKeyOf } from "./queryKeys.js"
export { retryTransient } from "./retry.js"
