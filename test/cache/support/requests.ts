/** Requests and a counting handler shared by the result cache tests. */
import type { ServeRequest } from "queryserve"

const path = (key: string) => `/api/analytics/${key}`
export const get = (key: string, query: Record<string, string | Array<string>> = {}, headers: Record<string, string> = {}): ServeRequest => ({
  method: "GET",
  path: path(key),
  query,
  headers
})
export const post = (key: string, body: unknown): ServeRequest => ({
  method: "POST",
  path: path(key),
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

/** A handler that counts its runs and answers rows made from its input. */
export const counted = () => {
  const runs = { count: 0 }
  const query = ({ input }: { input: { region?: string; limit?: number } }) => {
    runs.count++
    return [{ region: input.region ?? "all", limit: input.limit ?? 10, run: runs.count }]
  }
  return { runs, query }
}

