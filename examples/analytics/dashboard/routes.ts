/**
 * The dashboard in front of the API: `GET /` and its files are answered here, every other
 * request goes to the API's handler unchanged. One ServeHandler, so the demo keeps queryserve's own
 * Node server (drain on SIGTERM, timeouts, compression) for the page as for the API.
 */
import type { ServeHandler, ServeRequest, ServeResponse } from "queryserve"
import { type DashboardAssets, ICON_PATH, SCRIPT_PATH, STYLESHEET_PATH } from "./assets.js"

// The page loads nothing from anywhere else; recharts and React set styles through the DOM, which the policy allows.
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // The bundle is made at each start: ask again rather than keep a copy from an earlier run.
  "cache-control": "no-cache"
}

const file = (contentType: string, body: string): ServeResponse => ({
  status: 200,
  headers: { "content-type": contentType, ...SECURITY_HEADERS },
  body,
  // Bodies that never change: the Node adapter compresses each once and keeps it here.
  compressed: {}
})

export const withDashboard = (api: ServeHandler, assets: DashboardAssets): ServeHandler => {
  const files = new Map<string, ServeResponse>([
    ["/", file("text/html; charset=utf-8", assets.html)],
    [SCRIPT_PATH, file("text/javascript; charset=utf-8", assets.script)],
    [STYLESHEET_PATH, file("text/css; charset=utf-8", assets.stylesheet)],
    [ICON_PATH, file("image/svg+xml", assets.icon)]
  ])
  const handler = (request: ServeRequest) => (request.method === "GET" && files.get(request.path)) || api(request)
  return Object.assign(handler, { corsHeaders: api.corsHeaders })
}
