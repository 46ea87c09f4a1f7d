import * as Context from "effect/Context"
import type { ResultCacheControl } from "../cache/resultCache.js"
import type { AuthStrategy, EndpointInfo, ServeAuthContext } from "../domain/config.js"
import type { ServeError } from "../domain/errors.js"
import type { QueryTransport } from "../domain/event.js"
import type { ServeRequest, ServeResponse } from "../domain/http.js"
import type { MaybePromise } from "../domain/maybePromise.js"
import type { PresetInputs } from "../stages/context.js"
import type { RoutePlan } from "../stages/plan.js"

export interface ExecuteOptions {
  readonly input?: unknown
  /** Merged into `ctx`; an `auth` here is taken as the authenticated caller and strategies are skipped. */
  readonly context?: Readonly<Record<string, unknown>>
  readonly request?: Partial<ServeRequest>
}

/** An endpoint run for another transport than its own route (MCP): the request is that transport's. */
export interface CallOptions extends PresetInputs {
  readonly request: ServeRequest
  readonly requestId: string
  readonly transport: QueryTransport
  /**
   * The transport's form of the (encoded) result, made within the execution as an HTTP body is: when
   * it throws (a result with no JSON text), the execution fails with a 500 and is reported so.
   */
  readonly encode: (value: unknown) => unknown
}

/** How one endpoint execution ended: its (encoded) value, or the error its response would carry. */
export type ExecutionOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: ServeError }

export interface PipelineService {
  /** Answers one request: routing, the stages in their documented order, and the response. */
  handle(request: ServeRequest): MaybePromise<ServeResponse>
  /** Runs one endpoint in-process; resolves its (encoded) result or rejects with a ServeHttpError. */
  execute(key: string, options?: ExecuteOptions): Promise<unknown>
  /** Every route (endpoint routes and `builder.route` extras). */
  routes(): ReadonlyArray<RoutePlan>
  endpoint(key: string): EndpointInfo | undefined
  /** Recompiles the plans after the definition changed (`use`, `useAuth`, `route`). */
  refresh(): void
  /** Runs `strategies` on `request` with the AuthService; throws (or rejects) Unauthorized for invalid credentials. */
  authenticate(strategies: ReadonlyArray<AuthStrategy>, request: ServeRequest, endpoint: EndpointInfo): MaybePromise<ServeAuthContext | null>
  /** Whether `caller` passes an endpoint's guards: required auth, roles, scopes and a required tenant. */
  admits(key: string, caller: ServeAuthContext | null): boolean
  /** Runs an endpoint through its stages for another transport, with the input given; never rejects. */
  call(key: string, options: CallOptions): MaybePromise<ExecutionOutcome>
  /** The result cache: invalidation and counts (zeros when `resultCache` is off). */
  readonly cache: ResultCacheControl
}

/** The request pipeline of one API: every route, the stages in their order, and in-process calls. */
export class Pipeline extends Context.Tag("queryserve/Pipeline")<Pipeline, PipelineService>() {}
