import type { DocsOptions } from "./options.js"

const DEFAULT_DOCS_TITLE = "API reference"
export const SCALAR_SCRIPT_NAME = "scalar.js"

export interface DocsHtmlOptions extends DocsOptions {
  /**
   * Where the page loads Scalar's script from. Default: `<last segment of path>/scalar.js`, the route
   * queryserve serves beside a page at `basePath + path` (`docs/scalar.js` for the default "/docs").
   */
  readonly scriptUrl?: string
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** Escapes text for HTML element content and quoted attribute values alike. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!)

const defaultScriptUrl = (path: string | undefined): string => {
  const lastSegment = (path ?? "/docs").split("/").filter((segment) => segment.length > 0).pop()
  return lastSegment === undefined ? SCALAR_SCRIPT_NAME : `${lastSegment}/${SCALAR_SCRIPT_NAME}`
}

// The page must work offline and talk to nobody but this server: no fonts from Scalar's CDN, no
// telemetry, and no developer toolbar (its "Share" uploads the document to Scalar's servers).
const SCALAR_CONFIGURATION = JSON.stringify({ withDefaultFonts: false, telemetry: false, showToolbar: "never" })

/**
 * The API-reference page: Scalar reading the OpenAPI document at `openapiUrl`. No inline script
 * (the configuration travels in data attributes), so a `script-src 'self'` policy allows it.
 */
export const buildDocsHtml = (openapiUrl: string, options: DocsHtmlOptions = {}): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(options.title ?? DEFAULT_DOCS_TITLE)}</title>
  </head>
  <body>
    <script id="api-reference" type="application/json" data-url="${escapeHtml(openapiUrl)}" data-configuration="${escapeHtml(SCALAR_CONFIGURATION)}"></script>
    <script src="${escapeHtml(options.scriptUrl ?? defaultScriptUrl(options.path))}"></script>
  </body>
</html>
`
