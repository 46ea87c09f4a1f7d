import type { ServeRequest } from "../domain/http.js"
import { getHeader } from "../domain/http.js"

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Echoes a safe `x-request-id` (preferred) or `x-trace-id`; otherwise generates a UUID. */
export const resolveRequestId = (request: ServeRequest): string => {
  const incoming = getHeader(request, "x-request-id") ?? getHeader(request, "x-trace-id")
  return incoming !== undefined && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
}
