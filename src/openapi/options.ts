export interface OpenApiOptions {
  readonly enabled?: boolean
  readonly path?: string
  readonly info?: {
    readonly title?: string
    readonly version?: string
    readonly description?: string
    readonly contact?: { readonly name?: string; readonly url?: string; readonly email?: string }
    /** SPDX `identifier` or `url`, not both. */
    readonly license?: { readonly name: string; readonly identifier?: string; readonly url?: string }
  }
  /** Variant shape: the document version directly on the options. */
  readonly version?: string
  readonly title?: string
  /**
   * Where clients reach the API (the document's `servers`). Default: the URL `start()` listens on,
   * or `/` (the document's own origin) before it has started, when it listens on every interface or
   * when another server runs the handler.
   */
  readonly servers?: ReadonlyArray<{ readonly url: string; readonly description?: string }>
  /** Descriptions of the tags operations use, in the order reference pages should list them. */
  readonly tags?: ReadonlyArray<{
    readonly name: string
    readonly description?: string
    readonly externalDocs?: { readonly url: string; readonly description?: string }
  }>
}

/** `openapi` with its defaults applied. */
export type OpenApiPlan = Required<Pick<OpenApiOptions, "enabled" | "path">> & OpenApiOptions
