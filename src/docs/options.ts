export interface DocsOptions {
  readonly enabled?: boolean
  readonly path?: string
  readonly title?: string
}
