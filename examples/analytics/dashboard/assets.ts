/**
 * The dashboard's files, made in memory when the demo starts: esbuild bundles ./app.ts with React,
 * TanStack Query, `queryserve/react` and recharts from node_modules into one script, so the page
 * loads nothing but what this server sends. Nothing is written to disk.
 */
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

export interface DashboardAssets {
  readonly html: string
  readonly script: string
  readonly stylesheet: string
  readonly icon: string
}

/** Where the page loads its files from: beside `/`, outside the API's basePath. */
export const SCRIPT_PATH = "/dashboard/app.js"
export const STYLESHEET_PATH = "/dashboard/app.css"
export const ICON_PATH = "/dashboard/icon.svg"

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>queryserve analytics demo</title>
<link rel="icon" type="image/svg+xml" href="${ICON_PATH}">
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<script type="module" src="${SCRIPT_PATH}"></script>
</head>
<body><div id="root"></div></body>
</html>
`

export const buildDashboard = async (): Promise<DashboardAssets> => {
  const [bundle, stylesheet, icon] = await Promise.all([
    build({
      entryPoints: [here("./app.ts")],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      target: "es2022",
      minify: true,
      // The package's own entry from its sources, as the tests resolve it: no `npm run build` needed first.
      alias: { "queryserve/react": here("../../../src/react/index.ts") },
      define: { "process.env.NODE_ENV": '"production"' },
      logLevel: "silent"
    }),
    readFile(here("./dashboard.css"), "utf8"),
    readFile(here("./icon.svg"), "utf8")
  ])
  return { html, script: bundle.outputFiles[0]!.text, stylesheet, icon }
}
