import type { ServeAuthContext } from "../domain/config.js"
import type { ServeDefinition } from "../domain/definition.js"
import { andThen, type MaybePromise } from "../domain/maybePromise.js"
import type { AuthenticatorService } from "../services/Authenticator.js"
import type { TenantIsolationService } from "../services/TenantIsolation.js"
import type { RequestContext } from "./context.js"
import { runGuards } from "./guards.js"
import { readInput } from "./input.js"
import type { ContextHandler } from "./middleware.js"
import type { EndpointPlan } from "./plan.js"

/** What an in-process `execute` supplies instead of reading the request. */
export interface PresetInputs {
  readonly input?: unknown
  /** Merged into `ctx`; an `auth` here is taken as the authenticated caller and strategies are skipped. */
  readonly context?: Readonly<Record<string, unknown>>
}

/**
 * The stages between routing and the middleware chain, one function each, in SPEC.md's order.
 * `runStages` chains them directly; the traced runner (tracing.ts) runs each in its own span.
 */
export interface StageSteps {
  /** The caller: the strategies in order, or the `auth` an in-process call presets. */
  authenticate(plan: EndpointPlan, ctx: RequestContext, preset: PresetInputs | undefined): MaybePromise<ServeAuthContext | null>
  /** requireAuth, then roles, then scopes, against `ctx.auth`. */
  authorize(plan: EndpointPlan, ctx: RequestContext): void
  /** The caller's tenant id onto `ctx.tenantId`. */
  isolateTenant(plan: EndpointPlan, ctx: RequestContext): void
  /** The decoded input, read from the request (or preset). */
  validate(plan: EndpointPlan, ctx: RequestContext, preset: PresetInputs | undefined): MaybePromise<unknown>
  /** The context factory's values merged into `ctx`, tenant-scoped with auto-inject. */
  provideContext(plan: EndpointPlan, ctx: RequestContext, preset: PresetInputs | undefined): MaybePromise<void>
}

export const makeStageSteps = (
  definition: ServeDefinition,
  authenticator: AuthenticatorService,
  tenants: TenantIsolationService
): StageSteps => {
  const contextValues = (
    ctx: RequestContext,
    preset: PresetInputs | undefined
  ): MaybePromise<Readonly<Record<string, unknown>> | undefined> => {
    const factory = definition.context
    const base = typeof factory === "function" ? factory({ request: ctx.request, auth: ctx.auth }) : factory
    const extra = preset?.context
    if (extra === undefined) return base
    return andThen(base, (values) => ({ ...values, ...extra }))
  }

  return {
    authenticate: (plan, ctx, preset) => {
      const auth = preset?.context?.auth
      return auth !== undefined ? (auth as ServeAuthContext | null) : authenticator.authenticate(plan.strategies, ctx.request, plan.info)
    },
    authorize: (plan, ctx) => runGuards(plan, ctx.auth),
    isolateTenant: (plan, ctx) => {
      if (plan.tenant !== undefined) ctx.tenantId = tenants.resolve(plan.tenant, ctx.auth)
    },
    validate: (plan, ctx, preset) =>
      plan.input.decode(preset !== undefined ? preset.input : readInput(ctx.request.method, ctx.request, plan.input.coerce)),
    provideContext: (plan, ctx, preset) =>
      definition.context === undefined && preset?.context === undefined ? undefined : andThen(contextValues(ctx, preset), (values) => {
        if (values === undefined) return
        ctx.assign(
          plan.tenant?.mode === "auto-inject" && ctx.tenantId !== null ? tenants.scope(values, plan.tenant, ctx.tenantId) : values
        )
      })
  }
}

/**
 * Stages after routing: authentication → guards → tenant → validation → context → middlewares and
 * handler (`chain`) → output encoding. Synchronous for as long as every step is.
 */
export const runStages = (
  steps: StageSteps,
  plan: EndpointPlan,
  chain: ContextHandler,
  ctx: RequestContext,
  preset: PresetInputs | undefined
): MaybePromise<unknown> =>
  andThen(steps.authenticate(plan, ctx, preset), (caller) => {
    ctx.auth = caller
    steps.authorize(plan, ctx)
    steps.isolateTenant(plan, ctx)
    return andThen(steps.validate(plan, ctx, preset), (input) => {
      ctx.input = input
      return andThen(steps.provideContext(plan, ctx, preset), () => andThen(chain(ctx.asServeContext()), plan.output.encode))
    })
  })
