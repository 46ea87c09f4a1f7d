/** Where a page ends: the `page` member of a paginated answer. */
export interface PageInfo {
  readonly limit: number
  /** The `cursor` input that asks for the next page; null on the last page. */
  readonly nextCursor: string | null
  readonly hasMore: boolean
}

/** One page of a paginated endpoint's or a dataset's answer. */
export interface Page<Row> {
  readonly data: ReadonlyArray<Row>
  readonly page: PageInfo
}
