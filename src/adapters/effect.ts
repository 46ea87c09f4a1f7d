import type * as HttpApp from "@effect/platform/HttpApp"
import * as Effect from "effect/Effect"
import type { ServeHandler } from "../domain/http.js"
import type { HttpAppOptions } from "./effectApp.js"
import { checkedBodyLimit } from "./transport.js"

export type { HttpAppOptions }

/**
 * The API as an @effect/platform `HttpApp`, to mount in your own `HttpRouter` and serve with
 * `NodeHttpServer` (or any platform server):
 * `HttpRouter.empty.pipe(HttpRouter.mountApp("/api/analytics", toHttpApp(api), { includePrefix: true }))`.
 * Routing inside it uses the request's original URL, so it works mounted with or without the prefix.
 * The part of @effect/platform it uses is loaded when this is called, not when queryserve is imported.
 */
export const toHttpApp = (api: { readonly handler: ServeHandler }, options: HttpAppOptions = {}): HttpApp.Default => {
  // Checked now, where the mistake is made, not on the first request.
  checkedBodyLimit(options)
  const loading = import("./effectApp.js")
  // Handled here so that an app never served reports nothing; its requests see the failure.
  loading.catch(() => undefined)
  let app: HttpApp.Default | undefined
  const load = Effect.promise(() => loading).pipe(
    Effect.flatMap(({ makeHttpApp }) => (app ??= makeHttpApp(api, options)))
  )
  return Effect.suspend(() => app ?? load)
}
