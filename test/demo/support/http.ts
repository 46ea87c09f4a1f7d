/** Calls an endpoint of a running demo API the way curl does, and reads the answer. */

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body when it is JSON. */
  readonly json: unknown
}

export interface CallOptions {
  /** Sent as `x-api-key`. */
  readonly key?: string
  /** Query-string parameters. */
  readonly input?: Readonly<Record<string, string | number>>
  readonly headers?: Readonly<Record<string, string>>
}

export const callApi = async (baseUrl: string, endpoint: string, options: CallOptions = {}): Promise<Answer> => {
  const search = new URLSearchParams(Object.entries(options.input ?? {}).map(([k, v]) => [k, String(v)]))
  const headers = { ...options.headers, ...(options.key === undefined ? {} : { "x-api-key": options.key }) }
  const response = await fetch(`${baseUrl}/${endpoint}${search.size > 0 ? `?${search}` : ""}`, { headers })
  const text = await response.text()
  const json = response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : undefined
  return { status: response.status, headers: response.headers, text, json }
}
