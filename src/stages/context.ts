import type { KnownInput } from "./inputMemo.js"
import type { EndpointInfo, PageWindow, ServeAuthContext, ServeContext } from "../domain/config.js"
import type { ServeRequest } from "../domain/http.js"

const RESERVED = new Set([
  "input", "auth", "tenantId", "request", "requestId", "endpoint", "locals", "signal", "setCacheTtl", "setHeader", "page"
])

/**
 * The signal of a request without one, made on first use: workerd refuses `new AbortController()`
 * at a module's top level (the Worker's global scope), where this module is loaded.
 */
let neverAborted: AbortSignal | undefined

/**
 * The per-request `ctx`. A class keeps its shape stable for the engine; `locals` and response
 * headers are created only when first used.
 */
export class RequestContext {
  input: unknown = undefined
  tenantId: string | null = null
  /** Set by `setCacheTtl`; `undefined` means "use the endpoint's TTL". */
  cacheTtlOverride: number | null | undefined = undefined
  /** Set by validation on cached endpoints when the input is a remembered one: its cache key texts. */
  knownInput: KnownInput | undefined = undefined
  /** Set by the result cache stage on cached endpoints: the `x-cache` answer header. */
  cacheStatus: "HIT" | "MISS" | undefined = undefined
  responseHeaders: Record<string, string> | undefined = undefined
  /** Set on paginated endpoints before the handler runs. */
  page: PageWindow | undefined = undefined
  private localValues: Record<string, unknown> | undefined = undefined

  constructor(
    readonly request: ServeRequest,
    readonly requestId: string,
    readonly endpoint: EndpointInfo,
    public auth: ServeAuthContext | null
  ) {}

  get locals(): Record<string, unknown> {
    return (this.localValues ??= {})
  }

  get signal(): AbortSignal {
    return this.request.signal ?? (neverAborted ??= new AbortController().signal)
  }

  setCacheTtl(ms: number | null): void {
    // NaN or Infinity would go out as `max-age=NaN` and keep an entry for ever: a mistake to hear of.
    if (ms !== null && !(typeof ms === "number" && ms >= 0 && ms < Infinity)) {
      throw new TypeError(`ctx.setCacheTtl takes milliseconds (a finite number, 0 or more) or null, not ${String(ms)}`)
    }
    this.cacheTtlOverride = ms
  }

  setHeader(name: string, value: string): void {
    ;(this.responseHeaders ??= {})[name.toLowerCase()] = value
  }

  /** Merges the context factory's values; the built-in fields cannot be overwritten. */
  assign(values: Readonly<Record<string, unknown>>): void {
    const target = this as unknown as Record<string, unknown>
    for (const key of Object.keys(values)) {
      if (!RESERVED.has(key)) target[key] = values[key]
    }
  }

  /** The handler-facing view: the class already has every ServeContext member. */
  asServeContext(): ServeContext {
    return this as unknown as ServeContext
  }

  /** Back from the handler-facing view: every `ctx` the pipeline hands to middlewares is a RequestContext. */
  static of(ctx: ServeContext): RequestContext {
    return ctx as unknown as RequestContext
  }
}

/** What a caller other than an endpoint's own route (in-process `execute`, an MCP tool call) supplies instead of reading the request. */
export interface PresetInputs {
  /** The input to validate; the request's query string and body are not read. */
  readonly input?: unknown
  /** Merged into `ctx`. */
  readonly context?: Readonly<Record<string, unknown>>
  /** The caller, already authenticated; undefined runs the endpoint's strategies on the request. */
  readonly auth?: ServeAuthContext | null
}
