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
const isTableSource = (value: unknown): value is object =>
  isObjectLike(value) && typeof (value as { table?: unknown }).table === "function"

/**
 * A source's `table` taken on its own: `db.table`, or bound (`db.table.bind(db)`, named "bound table").
 * Calling it makes a builder as `table(name)` does, so it is wrapped and filtered like a callable source.
 */
const isTableFunction = (value: unknown): value is Callable =>
  typeof value === "function" && /^(bound )*table$/.test(value.name)

const isThenable = (value: unknown): boolean =>
  isObjectLike(value) && typeof (value as { then?: unknown }).then === "function"

/**
 * A class's own prototype (`C.prototype`, found again as `C.prototype.constructor.prototype`). Its
 * methods are written for an instance `this`, and it stays reachable as `ctx.db.constructor.prototype`
 * whatever `getPrototypeOf` says, so a wrapper for it would close nothing and only break `instanceof`.
 */
const isClassPrototype = (prototype: object): boolean => {
  const constructor = Object.getOwnPropertyDescriptor(prototype, "constructor")?.value as unknown
  return typeof constructor === "function" && Object.getOwnPropertyDescriptor(constructor, "prototype")?.value === prototype
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
  private prototype: { readonly raw: object; readonly wrapped: object } | undefined = undefined

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

  /** The one `table` every way of reading it through the wrapper gives: filtered. */
  private table(): Callable {
    return (this.scopedTable ??= (...args) => {
      const table = Reflect.get(this.source, "table", this.source) as Callable
      return this.filter(table.apply(this.source, args), "table()")
    })
  }

  get(_target: object, property: PropertyKey, receiver: unknown): unknown {
    if (property === "table" && isTableSource(this.source)) return this.table()
    // `Object.prototype.__proto__` run on the original would hand out its raw prototype; on the wrapper it asks getPrototypeOf below.
    if (property === "__proto__") return Reflect.get(this.source, property, receiver)
    return Reflect.get(this.source, property, this.source)
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

  /**
   * A prototype that is itself a table source (`Object.create({ table })`) is wrapped like the source,
   * or `Object.getPrototypeOf(ctx.db).table()` would run unfiltered; remembered so the answer stays
   * the same object. Allowed by the Proxy invariants while the stand-in target is extensible; once
   * someone made the wrapper non-extensible the engine throws instead (a 500, never a raw prototype).
   */
  getPrototypeOf(): object | null {
    const prototype = Reflect.getPrototypeOf(this.source)
    if (prototype === null || isClassPrototype(prototype) || !isTableSource(prototype)) return prototype
    if (this.prototype?.raw !== prototype) {
      this.prototype = { raw: prototype, wrapped: wrap(prototype, this.endpoint, this.key, this.column, this.tenantId) }
    }
    return this.prototype.wrapped
  }

  ownKeys(): Array<string | symbol> {
    return Reflect.ownKeys(this.source)
  }

  /**
   * Reported configurable: the stand-in target has none of these, and a Proxy may not claim otherwise.
   * For the same reason `table` can be reported with the filtered function as its value even when the
   * source's own is non-configurable and read-only: the invariants bind the stand-in, not the source.
   * A copy made from these descriptors (mixins, `Object.defineProperties`) is therefore filtered too.
   */
  getOwnPropertyDescriptor(_target: object, property: PropertyKey): PropertyDescriptor | undefined {
    const descriptor = Reflect.getOwnPropertyDescriptor(this.source, property)
    if (descriptor === undefined) return undefined
    if (property !== "table") return { ...descriptor, configurable: true }
    const writable = "value" in descriptor ? descriptor.writable === true : descriptor.set !== undefined
    return { value: this.table(), writable, enumerable: descriptor.enumerable === true, configurable: true }
  }
}

/** Made per request: with one `table()` call through it ~150 ns (measured); caching wrappers per tenant saved nothing. */
const wrap = (source: object, endpoint: string, key: string, column: string, tenantId: string): object =>
  new Proxy(typeof source === "function" ? () => undefined : {}, new SourceScope(source, endpoint, key, column, tenantId))

/**
 * How far the search for hidden sources goes. Fail-closed decides what happens at the bound: what lies
 * beyond it was not looked at and could hold a table source, so reaching it refuses the request rather
 * than let it run. The bounds are generous for data (a ctx value nested 4 objects deep, 256 objects in
 * all) and keep a large object graph (a client, a cache) from being walked on every request: such a
 * value belongs outside the context of an auto-inject endpoint, or the endpoint in manual mode.
 */
const MAX_DEPTH = 4
const MAX_OBJECTS = 256

/** Typed arrays and DataViews hold bytes, never a source: skipped, or their indices would be listed one by one. */
const isSearched = (value: unknown): value is object => typeof value === "object" && value !== null && !ArrayBuffer.isView(value)

/**
 * Prototypes whose getters are the runtime's own (`Map.prototype.size`, `URL.prototype.href`, …): the
 * walk up a searched object's prototype chain stops at the first of them. Collected on first use, not at load.
 */
let builtInPrototypes: ReadonlySet<unknown> | undefined
const BUILT_INS = [
  "Object", "Array", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "Date", "RegExp", "Error", "ArrayBuffer",
  "SharedArrayBuffer", "URL", "URLSearchParams", "AbortSignal", "EventTarget", "Blob", "Headers"
]
const isBuiltInPrototype = (prototype: object): boolean =>
  (builtInPrototypes ??= new Set(BUILT_INS.map((name) => (globalThis as unknown as Record<string, { prototype?: unknown } | undefined>)[name]?.prototype))).has(prototype)

/** The first getter on `value`'s prototype chain below the built-in prototypes, by name. */
const inheritedGetter = (value: object): string | undefined => {
  for (let prototype = Reflect.getPrototypeOf(value); prototype !== null && !isBuiltInPrototype(prototype); prototype = Reflect.getPrototypeOf(prototype)) {
    for (const key of Reflect.ownKeys(prototype)) {
      if (Reflect.getOwnPropertyDescriptor(prototype, key)?.get !== undefined) return String(key)
    }
  }
  return undefined
}

/** A WeakRef's target (undefined once collected, or for an object that only claims to be a WeakRef). */
const weakTarget = (value: object): unknown => {
  try {
    return WeakRef.prototype.deref.call(value)
  } catch {
    return undefined
  }
}

const MAP_KEY: unique symbol = Symbol("a Map key")
const SET_ENTRY: unique symbol = Symbol("a Set entry")
const WEAK_TARGET: unique symbol = Symbol("a WeakRef target")

const ARRAY_INDEX = /^(0|[1-9]\d*)$/

/** Arrays longer than this are searched by element (and symbol-keyed field) only: see HiddenSearch.elements. */
const ARRAY_KEYS_LIMIT = 100

/** A Map value, by its key. */
class MapValue {
  constructor(readonly key: unknown) {}
}

/** How a value was reached from its parent; kept raw and only spelled out for a refusal. */
type Segment = string | number | symbol | MapValue

const spell = (segment: Segment): string => {
  if (typeof segment === "string") return `.${segment}`
  if (typeof segment === "number") return `[${segment}]`
  if (segment === MAP_KEY) return " (a Map key)"
  if (segment === SET_ENTRY) return " (a Set entry)"
  if (segment === WEAK_TARGET) return ".deref()"
  if (typeof segment === "symbol") return `[${String(segment)}]`
  const key = segment.key
  return `.get(${typeof key === "string" ? JSON.stringify(key) : isObjectLike(key) ? "…" : String(key)})`
}

/**
 * Looks through the ctx values that are not table sources, for a table source or a promise inside
 * them: the wrapper is only put on top-level values, so one found deeper would run unfiltered. It
 * follows the data a value holds (every own field of any object, plain or class instance, enumerable
 * or not, symbol-keyed too; array elements (an array over 100 long by element and symbol-keyed
 * field only), Map keys and values, Set entries, a WeakRef's target),
 * each object once, and runs no code of the value's own except reading `table` and `then` (how a
 * source and a promise are told at the top level too): a getter, own or on the prototype chain below
 * the built-in prototypes, is refused, not called. A source's `table` function on its own (bound or
 * not) counts as a source. What no search can see (a closure, a `#private` field, a WeakMap) is like
 * a handle imported by the handler's module: outside what auto-inject filters.
 * Made only when some ctx value is an object, so a context of sources and primitives allocates nothing.
 */
class HiddenSearch {
  private readonly seen = new Set<object>()
  private readonly path: Array<Segment> = []
  private key = ""

  constructor(private readonly endpoint: string) {}

  /** Searches the top-level value `ctx[key]`. */
  search(key: string, value: object): void {
    this.key = key
    this.path.length = 0
    this.enter(value, 0)
  }

  private refuse(message: string): TenantScopeError {
    return refusal(this.endpoint, `ctx.${this.key}${this.path.map(spell).join("")} ${message}`)
  }

  /** A value at `depth` below its top-level value, reached through `segment`. */
  private visit(value: unknown, depth: number, segment: Segment): void {
    if (!isObjectLike(value)) return
    this.path.push(segment)
    const hidden = isTableSource(value) || isTableFunction(value) ? "a table source" : isThenable(value) ? "a promise" : undefined
    if (hidden !== undefined) {
      throw this.refuse(`is ${hidden} inside ctx.${this.key}; only top-level ctx values are filtered, so put it at the top level of the context`)
    }
    if (isSearched(value) && !this.seen.has(value)) {
      if (depth > MAX_DEPTH) throw this.refuse(`is nested more than ${MAX_DEPTH} levels inside ctx.${this.key}, deeper than auto-inject looks for a hidden table source`)
      this.enter(value, depth)
    }
    this.path.pop()
  }

  private enter(value: object, depth: number): void {
    this.seen.add(value)
    if (this.seen.size > MAX_OBJECTS) {
      throw refusal(this.endpoint, `the ctx values hold more than ${MAX_OBJECTS} objects (ctx.${this.key} reached the bound), more than auto-inject looks through for a hidden table source; keep large objects out of the context or use mode: "manual"`)
    }
    const getter = inheritedGetter(value)
    if (getter !== undefined) {
      throw this.refuse(`has a getter "${getter}" on its prototype chain, which auto-inject does not call, so it cannot tell whether it returns a table source; make it a plain field or a method, or use mode: "manual"`)
    }
    if (Array.isArray(value) && value.length > ARRAY_KEYS_LIMIT) this.elements(value, depth)
    else this.fields(value, Reflect.ownKeys(value), depth)
    if (value instanceof WeakRef) this.visit(weakTarget(value), depth + 1, WEAK_TARGET)
    else if (value instanceof Map) {
      Map.prototype.forEach.call(value, (entry: unknown, key: unknown) => {
        this.visit(key, depth + 1, MAP_KEY)
        // Only an object can hide anything, so no MapValue is made for the rest.
        if (isObjectLike(entry)) this.visit(entry, depth + 1, new MapValue(key))
      })
    } else if (value instanceof Set) {
      Set.prototype.forEach.call(value, (entry: unknown) => this.visit(entry, depth + 1, SET_ENTRY))
    }
  }

  /**
   * A long array: its elements, read by index (as the old search read every array), and its
   * symbol-keyed fields. Listing all of its keys would cost about 0.3 µs per element on every request.
   */
  private elements(array: ReadonlyArray<unknown>, depth: number): void {
    for (let index = 0; index < array.length; index++) this.visit(array[index], depth + 1, index)
    this.fields(array, Object.getOwnPropertySymbols(array), depth)
  }

  /**
   * The given own fields, enumerable or not (a handler reads a non-enumerable one as easily), each
   * read from its descriptor so that no getter runs. An array's elements are spelled by index; its
   * length is no field.
   */
  private fields(value: object, keys: ReadonlyArray<string | symbol>, depth: number): void {
    const array = Array.isArray(value)
    for (const field of keys) {
      if (array && field === "length") continue
      const descriptor = Reflect.getOwnPropertyDescriptor(value, field)
      if (descriptor === undefined) continue
      const segment = array && typeof field === "string" && ARRAY_INDEX.test(field) ? Number(field) : field
      if (descriptor.get !== undefined) {
        this.path.push(segment)
        throw this.refuse(`is a getter inside ctx.${this.key}, which auto-inject does not call, so it cannot tell whether it returns a table source; make it a plain field`)
      }
      this.visit(descriptor.value, depth + 1, segment)
    }
  }
}

/**
 * The ctx values with every table source wrapped for `tenantId`; the originals are never changed.
 * Throws TenantScopeError when no value is a table source (the handler could only read unfiltered
 * data) or when one is hidden from the wrapping (behind a promise, or anywhere inside another value).
 */
export const scopeTableSources = (
  endpoint: string,
  values: Readonly<Record<string, unknown>>,
  column: string,
  tenantId: string
): Readonly<Record<string, unknown>> => {
  const scoped: Record<string, unknown> = {}
  let sources = 0
  let hidden: HiddenSearch | undefined
  for (const key of Object.keys(values)) {
    const value = values[key]
    if (isTableSource(value) || isTableFunction(value)) {
      scoped[key] = wrap(value, endpoint, key, column, tenantId)
      sources++
      continue
    }
    if (isThenable(value)) {
      throw refusal(endpoint, `ctx.${key} is a promise, and what it resolves to cannot be filtered; resolve it in the context factory (which may be async)`)
    }
    if (isSearched(value)) (hidden ??= new HiddenSearch(endpoint)).search(key, value)
    scoped[key] = value
  }
  if (sources === 0) {
    throw refusal(endpoint, "no ctx value has a table(name) method to filter; give the context a query builder (e.g. context: () => ({ db })) or use mode: \"manual\"")
  }
  return scoped
}
