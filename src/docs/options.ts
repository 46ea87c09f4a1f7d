export interface DocsOptions {
  readonly enabled?: boolean
  readonly path?: string
  readonly title?: string
}

/** `docs` with its defaults applied. */
export type DocsPlan = Required<Pick<DocsOptions, "enabled" | "path">> & DocsOptions
