/**
 * The reason a request's signal aborts with when its client closed the connection. An AbortError, as
 * handlers expect of an aborted signal; a class of its own, so that reporting can tell it from any
 * other abort (a request timeout, a caller's own signal).
 */
export class ClientClosed extends DOMException {
  constructor() {
    super("The client closed the connection", "AbortError")
  }
}

/** What events, hooks, log lines and metrics report for a request whose client left first: nginx's "client closed request". */
export const CLIENT_CLOSED_STATUS = 499
