import type { JsonSchema } from "../domain/jsonSchema.js"
import { sortByName } from "./sortByName.js"

/** An OpenAPI Header Object. */
interface HeaderObject {
  readonly description: string
  readonly schema: JsonSchema
}

type Ref = { readonly $ref: string }

const text = (description: string): HeaderObject => ({ description, schema: { type: "string" } })
const integer = (description: string): HeaderObject => ({ description, schema: { type: "integer", minimum: 0 } })

/** The response headers queryserve itself sets, by header name. */
const RESPONSE_HEADERS: Readonly<Record<string, HeaderObject>> = {
  "X-Request-Id": text("Echoes a safe incoming x-request-id (or x-trace-id), otherwise a generated UUID."),
  "Cache-Control": text(
    "How long the answer may be reused: `private, max-age=S` when it depends on the caller (auth or tenant; " +
      "`private, no-cache` when its credentials cannot be named in Vary), `public, max-age=S` otherwise, " +
      "`no-store` when the endpoint's cache TTL is 0."
  ),
  ETag: text(
    "Validator of the answer: strong, or weak (`W/`) when the answer was compressed. " +
      "Send it back in If-None-Match to get 304 while the answer has not changed."
  ),
  Vary: text(
    "The request headers the answer depends on, for caches: `Accept` when the format was negotiated on an answer " +
      "with a cache TTL above 0, with the credential headers of one that depends on the caller; `Origin` when the " +
      "API answers CORS requests; `Accept-Encoding` when the body may be compressed."
  ),
  "X-Cache": {
    description: "`HIT` when the answer came from the server's result cache, `MISS` when the query ran for it.",
    schema: { type: "string", enum: ["HIT", "MISS"] }
  },
  "X-RateLimit-Limit": integer("Requests allowed per window."),
  "X-RateLimit-Remaining": integer("Requests left in the current window."),
  "X-RateLimit-Reset": integer("Seconds until the window resets."),
  "Retry-After": integer("Seconds until the window resets."),
  Link: text("The next page of a paginated answer: `<…?cursor=…>; rel=\"next\"`, sent while there are more rows.")
}

/** Names the `rateLimit` middleware documents on the answers of the endpoints it guards. */
export const RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]

/** `X-Request-Id` → `RequestId`, `Cache-Control` → `CacheControl`: a component name from a header name. */
const componentName = (header: string): string => header.replace(/^X-/i, "").replace(/[^A-Za-z0-9]/g, "")

/**
 * `components.headers` of one document: each header used gets one component, and answers refer to it.
 * A header a middleware documents that queryserve does not know is described generically.
 */
export class HeaderComponents {
  private readonly components: Record<string, HeaderObject> = Object.create(null)
  private readonly refsByName = new Map<string, Ref>()

  /** Header references for a response, keyed by header name, in the order given. */
  refs(names: Iterable<string>): Record<string, Ref> {
    const refs: Record<string, Ref> = {}
    for (const name of names) refs[name] = this.ref(name)
    return refs
  }

  private ref(name: string): Ref {
    let ref = this.refsByName.get(name)
    if (ref === undefined) {
      const component = componentName(name)
      this.components[component] = RESPONSE_HEADERS[name] ?? text(`Set by a middleware of this endpoint.`)
      this.refsByName.set(name, (ref = { $ref: `#/components/headers/${component}` }))
    }
    return ref
  }

  /** The components by name, sorted. */
  toJSON(): Record<string, HeaderObject> {
    return sortByName(this.components)
  }
}
