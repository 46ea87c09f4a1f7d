import type { ServeHandler, ServeRequest, ServeResponse } from "queryserve"

/** In-process requests through `builder.handler`, shaped as an adapter would hand them over. */
export const get = (path: string, query: Record<string, string | Array<string>> = {}, headers: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path,
  query,
  headers
})

export const post = (path: string, body: string, contentType = "application/json"): ServeRequest => ({
  method: "POST",
  path,
  query: {},
  headers: { "content-type": contentType },
  body
})

export const send = async (handler: ServeHandler, request: ServeRequest): Promise<ServeResponse> => handler(request)

export const bodyOf = (response: ServeResponse): unknown => (response.body === null ? null : JSON.parse(response.body))
