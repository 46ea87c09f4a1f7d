import type { InputMemo } from "./inputMemo.js"
import type { AnyQueryConfig, AuthStrategy, EndpointInfo, ServeMiddleware } from "../domain/config.js"
import type { HttpMethod } from "../domain/http.js"
import type { CompiledSchema } from "../domain/schema.js"
import type { TenantPlan } from "../tenancy/tenantPlan.js"
import type { GuardPlan } from "./guards.js"
import type { Invoker } from "./invoke.js"

/** Everything a request to one endpoint needs, computed once at define time. */
export interface EndpointPlan extends GuardPlan {
  readonly info: EndpointInfo
  readonly config: AnyQueryConfig
  /** Endpoint strategies first, then the global ones; empty on public endpoints. */
  readonly strategies: ReadonlyArray<AuthStrategy>
  /** The merged tenant config; undefined when the endpoint is not tenant-scoped. */
  readonly tenant: TenantPlan | undefined
  /** `authFailureLimit` applies: the endpoint runs strategies, so its 401s are counted per address. */
  readonly countsAuthFailures: boolean
  /** The credential headers a cached answer varies by ("" for none); null when a strategy does not say (see `credentialVary`). */
  readonly credentialVary: string | null
  /** A reusable answer's `Vary`, built once: with its format fixed (a `.csv` route) and negotiated from `Accept`. */
  readonly vary: { readonly fixed: string; readonly negotiated: string }
  readonly input: CompiledSchema
  readonly output: CompiledSchema
  readonly middlewares: ReadonlyArray<ServeMiddleware>
  readonly invoke: Invoker
  /** The result cache serves it: `resultCache` is on and its TTL is positive. */
  readonly resultCached: boolean
  /** On result-cached endpoints: the inputs validated so far, by their raw text. */
  readonly inputMemo: InputMemo | undefined
  /** On paginated endpoints: their page sizes (`input` and `output` then describe the paged shapes). */
  readonly page: PagePlan | undefined
  /** Its answers are `{ data, page }` (paginated endpoints, dataset queries): CSV and NDJSON carry the rows of `data`. */
  readonly answersPages: boolean
}

/** The page sizes of a paginated endpoint, defaults applied. */
export interface PagePlan {
  readonly defaultLimit: number
  readonly maxLimit: number
}

/** One route: the endpoint's own, or an extra one added with `builder.route`. */
export interface RoutePlan {
  readonly method: HttpMethod
  readonly path: string
  readonly endpoint: EndpointPlan
}

export type { HttpMethod }
