/** The page of a paginated answer, shared by paginated endpoints and datasets. */
import { encodeCursor } from "./cursor.js"

export interface Page {
  readonly limit: number
  /** The cursor of the next page; null on the last one. */
  readonly nextCursor: string | null
  readonly hasMore: boolean
}

/**
 * The page of the `rows` a source gave for `LIMIT limit + 1 OFFSET offset`: the extra row only says
 * that there is more, and is not part of the page.
 */
export const pageOf = <Row>(
  rows: ReadonlyArray<Row>,
  limit: number,
  offset: number,
  binding: string
): { readonly data: ReadonlyArray<Row>; readonly page: Page } => {
  const hasMore = rows.length > limit
  return {
    data: hasMore ? rows.slice(0, limit) : rows,
    page: { limit, nextCursor: hasMore ? encodeCursor(offset + limit, binding) : null, hasMore }
  }
}
