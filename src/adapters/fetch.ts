import type { ServeRequest, ServeHandler } from "../domain/http.js"
import { parseQueryString } from "../domain/queryString.js"

/** A fetch-style `(request: Request) => Promise<Response>` over a ServeHandler, for edge runtimes. */
export const createFetchHandler = (handler: ServeHandler) => async (request: Request): Promise<Response> => {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  const method = request.method.toUpperCase()
  const serveRequest: ServeRequest = {
    method,
    path: url.pathname,
    query: parseQueryString(url.search.slice(1)),
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : await request.text(),
    signal: request.signal,
    raw: request
  }
  const response = await handler(serveRequest)
  return new Response(response.body, { status: response.status, headers: response.headers })
}
