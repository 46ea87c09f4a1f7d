import type { DocsPlan } from "./options.js"
import type { OpenApiPlan } from "../openapi/options.js"
import { joinPath } from "../domain/paths.js"
import type { DocsOptions } from "./options.js"
import { isDatasetRoute, DATASET_QUERY_PREFIX } from "../datasets/endpoints.js"
import { buildOpenApiDocument, DEFAULT_TITLE, DEFAULT_VERSION } from "../openapi/document.js"
import type { ServeEndpoint } from "../openapi/endpoint.js"
import type { StaticRoute } from "../stages/staticRoute.js"
import { buildDocsHtml, SCALAR_SCRIPT_NAME } from "./html.js"
import { loadScalarScript } from "./scalarScript.js"
import { andThen, type MaybePromise } from "../domain/maybePromise.js"
import { answerWithAsset, makeStaticAsset, type StaticAsset } from "./staticAsset.js"

/** What the contract routes read of an API's definition. */
interface ContractSettings {
  readonly basePath: string
  readonly openapi: OpenApiPlan
  readonly docs: DocsPlan
  /** The URL `start()` listens on, once it does: the OpenAPI document's default server. */
  readonly listening: { readonly url: string | undefined }
}

// Scalar injects its styles at run time, renders images from data URLs and compiles a WebAssembly
// module (which needs 'wasm-unsafe-eval', not JavaScript eval); everything else is this origin.
const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'"
].join("; ")

/**
 * `to` relative to the page at `from`, so the page's links keep working when a proxy mounts the API
 * under a prefix. `/a/docs` → `/a/openapi.json` is `./openapi.json`; from `/a/docs/` it is `../openapi.json`.
 */
const relativeUrl = (from: string, to: string): string => {
  const fromDirectory = from.slice(0, from.lastIndexOf("/")).split("/").filter((segment) => segment.length > 0)
  const target = to.split("/").filter((segment) => segment.length > 0)
  let common = 0
  while (common < fromDirectory.length && common < target.length - 1 && fromDirectory[common] === target[common]) common++
  const up = fromDirectory.length - common
  return (up === 0 ? "./" : "../".repeat(up)) + target.slice(common).join("/")
}

const openApiRoute = (path: string, build: () => unknown): StaticRoute => {
  let document: MaybePromise<StaticAsset> | undefined
  return {
    method: "GET",
    path,
    // Built on first request and kept: a changed definition (route, use, useAuth) compiles new routes.
    respond: (request) =>
      andThen(
        (document ??= makeStaticAsset(JSON.stringify(build()), {
          "content-type": "application/json; charset=utf-8",
          "cache-control": "no-cache"
        })),
        (asset) => answerWithAsset(request, asset)
      )
  }
}

const docsRoutes = (pagePath: string, openapiPath: string, options: DocsOptions): ReadonlyArray<StaticRoute> => {
  const scriptPath = joinPath(pagePath, SCALAR_SCRIPT_NAME)
  // The page's second spelling ends in a slash; a page at the root has only the one.
  const slashPath = pagePath === "/" ? pagePath : `${pagePath}/`
  // One page per spelling of the path, with and without a trailing slash: its links are relative.
  // Only those two: every other target that reaches the page (`/api/x/../docs`, which a browser never
  // sends) gets one of them, so no request can make a page of its own, kept for good.
  const pages = new Map<string, MaybePromise<StaticAsset>>()
  const pageFor = (requestPath: string, script: StaticAsset): MaybePromise<StaticAsset> => {
    let page = pages.get(requestPath)
    if (page === undefined) {
      // The script's ETag versions its URL: the script is cached for a year, and a new one is a new URL.
      const version = script.headers.etag!.slice(1, -1)
      const html = buildDocsHtml(relativeUrl(requestPath, openapiPath), {
        ...options,
        scriptUrl: `${relativeUrl(requestPath, scriptPath)}?v=${version}`
      })
      page = makeStaticAsset(html, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-cache",
        "content-security-policy": DOCS_CONTENT_SECURITY_POLICY
      })
      pages.set(requestPath, page)
    }
    return page
  }
  return [
    {
      method: "GET",
      path: pagePath,
      respond: (request) =>
        loadScalarScript().then((script) =>
          andThen(pageFor(request.path.endsWith("/") ? slashPath : pagePath, script), (page) => answerWithAsset(request, page))
        )
    },
    { method: "GET", path: scriptPath, respond: (request) => loadScalarScript().then((script) => answerWithAsset(request, script)) }
  ]
}

/**
 * `GET {basePath}`: a public index of the API, so that its base URL answers: its title and version,
 * where its documents are, its endpoints and its datasets. It shows no more than the OpenAPI document.
 */
const indexRoute = (definition: ContractSettings, paths: ContractPaths, endpoints: () => ReadonlyArray<ServeEndpoint>): StaticRoute => {
  const { openapi, docs } = definition
  const build = () => {
    const described = endpoints()
    return {
      title: openapi.info?.title ?? openapi.title ?? docs.title ?? DEFAULT_TITLE,
      version: openapi.info?.version ?? openapi.version ?? DEFAULT_VERSION,
      docs: paths.docs ?? null,
      openapi: paths.openapi ?? null,
      endpoints: described
        .filter((endpoint) => !isDatasetRoute(endpoint.key))
        .map(({ key, method, path, summary }) => ({ key, method, path, ...(summary === undefined ? {} : { summary }) })),
      datasets: described.flatMap(({ key }) => (key.startsWith(DATASET_QUERY_PREFIX) ? [key.slice(DATASET_QUERY_PREFIX.length)] : []))
    }
  }
  return { ...openApiRoute(definition.basePath, build), yields: true }
}

/** Paths of the OpenAPI document and the docs page; undefined when not served. */
export interface ContractPaths {
  readonly openapi: string | undefined
  readonly docs: string | undefined
}

/** Where the contract is published; the page renders the document, so no document means no page. */
export const contractPaths = (definition: ContractSettings): ContractPaths => {
  const { basePath, openapi, docs } = definition
  if (!openapi.enabled) return { openapi: undefined, docs: undefined }
  return { openapi: joinPath(basePath, openapi.path), docs: docs.enabled ? joinPath(basePath, docs.path) : undefined }
}

/**
 * The routes that publish an API's contract: the OpenAPI document at `basePath + openapi.path` and
 * the API-reference page at `basePath + docs.path` with Scalar's script beside it. The page renders
 * the document, so turning the document off turns the page off too.
 */
export const contractRoutes = (
  definition: ContractSettings,
  endpoints: () => ReadonlyArray<ServeEndpoint>
): ReadonlyArray<StaticRoute> => {
  const { openapi, docs, listening } = definition
  const paths = contractPaths(definition)
  const index = indexRoute(definition, paths, endpoints)
  const openapiPath = paths.openapi
  if (openapiPath === undefined) return [index]
  // The docs title names the API on the page's heading too, unless the OpenAPI options name it.
  const servers = openapi.servers ?? (listening.url === undefined ? undefined : [{ url: listening.url }])
  const documentOptions = { ...openapi, title: openapi.title ?? docs.title, servers }
  const routes = [openApiRoute(openapiPath, () => buildOpenApiDocument(endpoints(), documentOptions))]
  if (paths.docs === undefined) return [...routes, index]
  const title = docs.title ?? openapi.info?.title ?? openapi.title
  // The index comes last: it gives way to a page or document served at `basePath`.
  return [...routes, ...docsRoutes(paths.docs, openapiPath, { ...docs, title }), index]
}
