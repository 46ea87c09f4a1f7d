/**
 * One raw HTTP/1.1 exchange over node:net: the bytes go out exactly as given (fetch would refuse or
 * normalise most of what the fuzzer sends), and the first complete response is parsed back.
 */
import { connect } from "node:net"

export interface RawResponse {
  readonly status: number
  /** Lower-case names; repeated headers keep every value. */
  readonly headers: ReadonlyMap<string, ReadonlyArray<string>>
  readonly body: string
}

/** A response, or why there was none: the connection closed or was reset first, or nothing came in time. */
export type RawOutcome =
  | { readonly answered: true; readonly response: RawResponse }
  | { readonly answered: false; readonly reason: "closed" | "reset" | "refused" | "timeout"; readonly received: string }

export const header = (response: RawResponse, name: string): string | undefined => response.headers.get(name)?.[0]

interface Head {
  readonly status: number
  readonly headers: Map<string, Array<string>>
  readonly bodyStart: number
}

const parseHead = (text: string, from: number): Head | undefined => {
  const end = text.indexOf("\r\n\r\n", from)
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = text.slice(from, end).split("\r\n")
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN)
  const headers = new Map<string, Array<string>>()
  for (const line of lines) {
    const colon = line.indexOf(":")
    const name = line.slice(0, colon).trim().toLowerCase()
    const values = headers.get(name) ?? []
    values.push(line.slice(colon + 1).trim())
    headers.set(name, values)
  }
  return { status, headers, bodyStart: end + 4 }
}

/** The decoded body of a chunked message, or undefined while it is incomplete. */
const dechunk = (text: string, from: number): string | undefined => {
  let body = ""
  let at = from
  for (;;) {
    const lineEnd = text.indexOf("\r\n", at)
    if (lineEnd === -1) return undefined
    const size = parseInt(text.slice(at, lineEnd), 16)
    if (size === 0) return text.indexOf("\r\n", lineEnd + 2) === -1 ? undefined : body
    if (text.length < lineEnd + 2 + size + 2) return undefined
    body += text.slice(lineEnd + 2, lineEnd + 2 + size)
    at = lineEnd + 2 + size + 2
  }
}

/** The first complete final (non-1xx) response in `text`; `ended` once the server closed, which ends a close-delimited body. */
export const parseResponse = (text: string, headRequest: boolean, ended: boolean): RawResponse | undefined => {
  let from = 0
  for (;;) {
    const head = parseHead(text, from)
    if (head === undefined) return undefined
    if (head.status >= 100 && head.status < 200) {
      from = head.bodyStart
      continue
    }
    const { status, headers, bodyStart } = head
    if (headRequest || status === 204 || status === 304) return { status, headers, body: "" }
    const length = headers.get("content-length")?.[0]
    if (length !== undefined) {
      const end = bodyStart + Number(length)
      return text.length >= end ? { status, headers, body: text.slice(bodyStart, end) } : undefined
    }
    if (headers.get("transfer-encoding")?.[0]?.toLowerCase() === "chunked") {
      const body = dechunk(text, bodyStart)
      return body === undefined ? undefined : { status, headers, body }
    }
    return ended ? { status, headers, body: text.slice(bodyStart) } : undefined
  }
}

/**
 * Sends `request` on a new connection and resolves with the first response. The connection is
 * never half-closed: node:http would take that as the client giving up on its request.
 */
export const exchange = (port: number, request: string | Buffer, options: { headRequest: boolean; timeoutMs: number }): Promise<RawOutcome> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    let settled = false
    const finish = (outcome: RawOutcome): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ answered: false, reason: "timeout", received }), options.timeoutMs)
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      received += chunk
      const response = parseResponse(received, options.headRequest, false)
      if (response !== undefined) finish({ answered: true, response })
    })
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // The server may answer and then reset a connection whose request it did not read to the end.
      const response = parseResponse(received, options.headRequest, true)
      if (response !== undefined) return finish({ answered: true, response })
      finish({ answered: false, reason: error.code === "ECONNREFUSED" ? "refused" : "reset", received })
    })
    socket.on("close", () => {
      const response = parseResponse(received, options.headRequest, true)
      finish(response !== undefined ? { answered: true, response } : { answered: false, reason: "closed", received })
    })
    socket.on("connect", () => socket.write(request))
  })
