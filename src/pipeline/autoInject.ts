/**
 * Auto-inject: every ctx value that is a table source is replaced, for one request, by a wrapper whose
 * `table(name)` returns the source's builder already filtered on the tenant column. It fails closed:
 * whatever it cannot see through is refused, never run unfiltered.
 */

/** Why auto-inject refused a request (answered 500; the message stays in the process, for logs and `onError`). */
export class TenantScopeError extends Error {
  override readonly name = "TenantScopeError"
}

const reported = new Set<string>()

/** The refusal, logged the first time each cause is seen (a misconfigured endpoint must not flood the log). */
const refusal = (endpoint: string, message: string): TenantScopeError => {
  const error = new TenantScopeError(`auto-inject refused a request to "${endpoint}": ${message}`)
  if (!reported.has(error.message) && reported.size < 100) {
    reported.add(error.message)
    console.error(`[queryserve] ${error.message}`)
  }
  return error
}

type Callable = (...args: Array<unknown>) => unknown

const isObjectLike = (value: unknown): value is object =>
  (typeof value === "object" && value !== null) || typeof value === "function"

/** An object or function whose `table` is a function: own or inherited, plain or accessor. */
export const isTableSource = (value: unknown): value is object =>
  isObjectLike(value) && typeof (value as { table?: unknown }).table === "function"

const isThenable = (value: unknown): boolean =>
  isObjectLike(value) && typeof (value as { then?: unknown }).then === "function"

/** Plain objects and arrays are looked into one level, to refuse a table source hidden there. */
const isContainer = (value: unknown): value is object => {
  if (Array.isArray(value)) return true
  if (typeof value !== "object" || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * The Proxy handler of one wrapped source for one request. The Proxy's target is a fresh empty
 * stand-in, never the source: a frozen source's `table` could not be answered differently
 * through a Proxy of it. Every other member is read from the source with the source as receiver,
 * so getters run against the original (`#private` state works); methods called on the wrapper get
 * the wrapper as `this`, so a helper that calls `this.table()` is filtered too.
 */
class SourceScope implements ProxyHandler<object> {
  private scopedTable: Callable | undefined = undefined

  constructor(
    private readonly source: object,
    private readonly endpoint: string,
    private readonly key: string,
    private readonly column: string,
    private readonly tenantId: string
  ) {}

  /** A builder the source made, filtered; refused when it cannot be. */
  private filter(builder: unknown, made: string): unknown {
    const where: unknown = isObjectLike(builder) ? (builder as { where?: unknown }).where : undefined
    if (typeof where !== "function") {
      throw refusal(this.endpoint, `ctx.${this.key}.${made} returned a value without a where() method, so the tenant filter cannot be added`)
    }
    return (where as Callable).call(builder, this.column, "eq", this.tenantId)
  }

  get(_target: object, property: PropertyKey): unknown {
    if (property !== "table") return Reflect.get(this.source, property, this.source)
    return (this.scopedTable ??= (...args) => {
      const table = Reflect.get(this.source, "table", this.source) as Callable
      return this.filter(table.apply(this.source, args), "table()")
    })
  }

  /** Calling a callable source (Knex's `knex("orders")`) makes a builder like `table()`: filtered the same way. */
  apply(_target: object, thisArgument: unknown, args: Array<unknown>): unknown {
    return this.filter(Reflect.apply(this.source as Callable, thisArgument, args), "(...)")
  }

  has(_target: object, property: PropertyKey): boolean {
    return Reflect.has(this.source, property)
  }

  set(_target: object, property: PropertyKey, value: unknown): boolean {
    return Reflect.set(this.source, property, value, this.source)
  }

  deleteProperty(_target: object, property: PropertyKey): boolean {
    return Reflect.deleteProperty(this.source, property)
  }

  getPrototypeOf(): object | null {
    return Reflect.getPrototypeOf(this.source)
  }

  ownKeys(): Array<string | symbol> {
    return Reflect.ownKeys(this.source)
  }

  /** Reported configurable: the stand-in target has none of these, and a Proxy may not claim otherwise. */
  getOwnPropertyDescriptor(_target: object, property: PropertyKey): PropertyDescriptor | undefined {
    const descriptor = Reflect.getOwnPropertyDescriptor(this.source, property)
    return descriptor === undefined ? undefined : { ...descriptor, configurable: true }
  }
}

/** Made per request: with one `table()` call through it ~150 ns (measured); caching wrappers per tenant saved nothing. */
const wrap = (source: object, endpoint: string, key: string, column: string, tenantId: string): object =>
  new Proxy(typeof source === "function" ? () => undefined : {}, new SourceScope(source, endpoint, key, column, tenantId))

/** Refuses a value auto-inject cannot see through: a promise, or a table source one level down. */
const refuseHidden = (endpoint: string, key: string, value: unknown): void => {
  if (isThenable(value)) {
    throw refusal(endpoint, `ctx.${key} is a promise, and what it resolves to cannot be filtered; resolve it in the context factory (which may be async)`)
  }
  if (!isContainer(value)) return
  for (const inner of Object.keys(value)) {
    const nested = (value as Record<string, unknown>)[inner]
    const hidden = isTableSource(nested) ? "a table source" : isThenable(nested) ? "a promise" : undefined
    if (hidden !== undefined) {
      throw refusal(endpoint, `ctx.${key}.${inner} is ${hidden} inside ctx.${key}; only top-level ctx values are filtered, so put it at the top level of the context`)
    }
  }
}

/**
 * The ctx values with every table source wrapped for `tenantId`; the originals are never changed.
 * Throws TenantScopeError when no value is a table source (the handler could only read unfiltered
 * data) or when one is hidden from the wrapping.
 */
export const scopeTableSources = (
  endpoint: string,
  values: Readonly<Record<string, unknown>>,
  column: string,
  tenantId: string
): Readonly<Record<string, unknown>> => {
  const scoped: Record<string, unknown> = {}
  let sources = 0
  for (const key of Object.keys(values)) {
    const value = values[key]
    if (isTableSource(value)) {
      scoped[key] = wrap(value, endpoint, key, column, tenantId)
      sources++
    } else {
      refuseHidden(endpoint, key, value)
      scoped[key] = value
    }
  }
  if (sources === 0) {
    throw refusal(endpoint, "no ctx value has a table(name) method to filter; give the context a query builder (e.g. context: () => ({ db })) or use mode: \"manual\"")
  }
  return scoped
}
