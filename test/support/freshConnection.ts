import { request } from "node:http"

/**
 * One GET on a new connection that closes after the answer: a `workers` cluster's primary hands each
 * new connection to the next worker, so consecutive calls reach the workers in turn.
 */
export const getOnFreshConnection = (port: number, path: string): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, agent: false, headers: { connection: "close" } }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => (body += chunk.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    }).on("error", reject).end()
  })
