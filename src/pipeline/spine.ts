import { copyKnown, type InputMemo } from "../stages/inputMemo.js"

import type { ServeDefinition } from "../config/definition.js"
import { andThen, isPromiseLike, type MaybePromise } from "../domain/maybePromise.js"
import type { AuthServiceShape } from "../services/AuthService.js"
import type { TenantServiceShape } from "../services/TenantService.js"
import type { PresetInputs, RequestContext } from "../stages/context.js"
import { runGuards } from "../stages/guards.js"
import { readInput } from "../stages/input.js"
import type { ContextHandler } from "../stages/middleware.js"
import type { EndpointPlan } from "../stages/plan.js"

/** One stage between routing and the middleware chain: it reads `ctx` and writes its result there. */
type Step = (plan: EndpointPlan, ctx: RequestContext, preset: PresetInputs | undefined) => MaybePromise<void>

/** The stages between routing and the middleware chain, one function each (see `STAGES` for their order). */
export interface StageSteps {
  /** The caller onto `ctx.auth`: the strategies in order, or the `auth` a preset carries. */
  readonly authenticate: Step
  /** requireAuth, then roles, then scopes, against `ctx.auth`. */
  readonly authorize: Step
  /** The caller's tenant id onto `ctx.tenantId`. */
  readonly isolateTenant: Step
  /** The decoded input onto `ctx.input`, read from the request (or preset). */
  readonly validate: Step
  /** The context factory's values merged into `ctx`, tenant-scoped with auto-inject. */
  readonly provideContext: Step
}

/**
 * The order of an endpoint request's stages after routing, written once: the plain runner
 * (`EndpointStages`) calls them in this order, the traced one (tracing.ts) runs each in a span of this
 * name. After them comes the answer: middlewares, the result cache, the handler, output encoding.
 */
export const STAGES: ReadonlyArray<{ readonly name: string; readonly step: keyof StageSteps }> = [
  { name: "authenticate", step: "authenticate" },
  { name: "guards", step: "authorize" },
  { name: "tenant", step: "isolateTenant" },
  { name: "validate", step: "validate" },
  { name: "context", step: "provideContext" }
]

const decodeRequest = (plan: EndpointPlan, ctx: RequestContext): MaybePromise<unknown> =>
  plan.input.decode(readInput(ctx.request.method, ctx.request, plan.input.coerce))

/**
 * Validation on a cached endpoint: an input read from a raw text validated before is a copy of the
 * value it gave, with its cache key texts on `ctx.knownInput`; a new one is validated and, when it
 * passes, remembered.
 */
const validateRemembered = (plan: EndpointPlan, memo: InputMemo, ctx: RequestContext): MaybePromise<unknown> => {
  const known = memo.get(ctx.request)
  if (known !== undefined) {
    ctx.knownInput = known
    return copyKnown(known)
  }
  const input = decodeRequest(plan, ctx)
  if (!isPromiseLike(input)) ctx.knownInput = memo.remember(ctx.request, input)
  return input
}

const NO_VALUES: Readonly<Record<string, unknown>> = {}

export const makeStageSteps = (
  definition: ServeDefinition,
  authenticator: AuthServiceShape,
  tenants: TenantServiceShape
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
      const auth = preset?.auth
      if (auth !== undefined) {
        ctx.auth = auth
        return
      }
      const caller = authenticator.authenticate(plan.strategies, ctx.request, plan.info)
      if (isPromiseLike(caller)) return caller.then((resolved) => void (ctx.auth = resolved))
      ctx.auth = caller
    },
    authorize: (plan, ctx) => runGuards(plan, ctx.auth),
    isolateTenant: (plan, ctx) => {
      if (plan.tenant !== undefined) ctx.tenantId = tenants.resolve(plan.tenant, ctx.auth)
    },
    validate: (plan, ctx, preset) => {
      const input = preset !== undefined
        ? plan.input.decode(preset.input)
        : plan.inputMemo === undefined
        ? decodeRequest(plan, ctx)
        : validateRemembered(plan, plan.inputMemo, ctx)
      if (isPromiseLike(input)) return input.then((decoded) => void (ctx.input = decoded))
      ctx.input = input
    },
    provideContext: (plan, ctx, preset) => {
      const tenant = plan.tenant
      const tenantId = ctx.tenantId
      // Auto-inject for a caller with a tenant: every ctx must pass through `scope`, which refuses one without a table source.
      if (tenant?.mode === "auto-inject" && tenantId !== null) {
        const scope = (values: Readonly<Record<string, unknown>> | undefined) =>
          ctx.assign(tenants.scope(values ?? NO_VALUES, tenant, tenantId, plan.info.key))
        return definition.context === undefined && preset?.context === undefined ? scope(undefined) : andThen(contextValues(ctx, preset), scope)
      }
      if (definition.context === undefined && preset?.context === undefined) return undefined
      return andThen(contextValues(ctx, preset), (values) => {
        if (values !== undefined) ctx.assign(values)
      })
    }
  }
}

/**
 * Stages after routing for one endpoint, built once at compile time: authentication → guards →
 * tenant → validation → context → middlewares and handler (`chain`) → output encoding. Synchronous
 * for as long as every step is, and then without a closure per request: a continuation is only
 * created where a step returned a promise. On a cached endpoint the chain ends in the result
 * cache, which encodes the handler's result before storing it (`encodeAfterChain` false).
 */
export class EndpointStages {
  constructor(
    private readonly steps: StageSteps,
    private readonly plan: EndpointPlan,
    private readonly chain: ContextHandler,
    private readonly encodeAfterChain: boolean
  ) {}

  run(ctx: RequestContext, preset: PresetInputs | undefined): MaybePromise<unknown> {
    return this.runFrom(0, ctx, preset)
  }

  private runFrom(first: number, ctx: RequestContext, preset: PresetInputs | undefined): MaybePromise<unknown> {
    for (let i = first; i < STAGES.length; i++) {
      const done = this.steps[STAGES[i]!.step](this.plan, ctx, preset)
      if (isPromiseLike(done)) {
        const next = i + 1
        return done.then(() => this.runFrom(next, ctx, preset))
      }
    }
    return this.runChain(ctx)
  }

  private runChain(ctx: RequestContext): MaybePromise<unknown> {
    const result = this.chain(ctx.asServeContext())
    if (this.encodeAfterChain) return andThen(result, this.plan.output.encode)
    return isPromiseLike(result) ? result.then((value) => this.encodedAnswer(ctx, value)) : this.encodedAnswer(ctx, result)
  }

  /**
   * On a cached endpoint the cache stage encodes (and says HIT or MISS); an answer a middleware gave
   * without calling `next()` never reached it, and is encoded here like any other endpoint's.
   */
  private encodedAnswer(ctx: RequestContext, value: unknown): unknown {
    return ctx.cacheStatus === undefined ? this.plan.output.encode(value) : value
  }
}
