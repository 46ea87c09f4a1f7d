import { maxHeaderSize, type Server, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { NotFound, type ServeError, ServeHttpError, ValidationError } from "../domain/errors.js"
import type { CorsHeaders, ServeResponse } from "../domain/http.js"
import type { RequestListener } from "../adapters/node.js"
import { adapterErrorResponse } from "../adapters/transport.js"

/** What node:http reports about a request it could not parse or did not receive in time. */
const protocolError = (error: NodeJS.ErrnoException & { readonly reason?: string }): ServeError => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new ServeHttpError(431, "PAYLOAD_TOO_LARGE", `The request headers exceed the limit of ${maxHeaderSize} bytes`, {
        details: { limitBytes: maxHeaderSize }
      })
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ServeHttpError(408, "VALIDATION_ERROR", "The request was not received in time")
    default:
      return new ValidationError({
        message: "The request is not valid HTTP/1.1",
        issues: [{ path: [], message: error.reason ?? error.message }]
      })
  }
}

/** An answer written straight to a socket that has no ServerResponse; the connection closes after it. */
const rawAnswer = (response: ServeResponse): string => {
  const body = response.body ?? ""
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}\r\n`
  for (const [name, value] of Object.entries(response.headers)) head += `${name}: ${value}\r\n`
  return `${head}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
}

/** How long a refused connection's remaining input is read and dropped before the socket is destroyed. */
const LINGER_MS = 2_000

/** Sockets whose refusal is written and which are draining their remaining input. */
const answered = new WeakSet<Duplex>()

const answerAndClose = (socket: Duplex, error: ServeError, cors: CorsHeaders | undefined): void => {
  answered.add(socket)
  // No header was parsed, so no Origin either: the CORS answer for an unknown origin.
  socket.end(rawAnswer(adapterErrorResponse(error, undefined, cors)))
  // Destroying the socket while the client still sends (a body after bad headers) makes the kernel
  // reset the connection, and a reset discards the answer the client has not read yet. So the rest
  // of the input is read and dropped until the client closes its side, or LINGER_MS have passed.
  socket.on("data", ignore)
  socket.resume()
  const linger = setTimeout(() => socket.destroy(), LINGER_MS)
  linger.unref()
  socket.once("end", () => socket.destroy())
  socket.once("close", () => clearTimeout(linger))
}

const ignore = (): void => {}

/**
 * Answers, with the ErrorEnvelope and an `X-Request-Id`, what node:http would otherwise answer
 * itself with a bare status line before any listener runs: malformed requests (400), headers
 * over `maxHeaderSize` (431), requests not received in time (408) and CONNECT (404: no route
 * tunnels). An `Expect` other than `100-continue` is ignored and the request served, as RFC 9110
 * allows, instead of node:http's 417.
 */
export const answerProtocolErrors = (server: Server, listener: RequestListener, cors: CorsHeaders | undefined): void => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports every later chunk of a refused request again: the answer is already on its way.
    if (answered.has(socket)) return
    // A peer that reset the connection, or a socket already closing, cannot be answered.
    if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
    answerAndClose(socket, protocolError(error), cors)
  })
  server.on("connect", (request: { readonly url?: string }, socket: Duplex) =>
    answerAndClose(socket, new NotFound({ message: `No route for CONNECT ${request.url ?? ""}` }), cors))
  server.on("checkExpectation", listener)
}
