/**
 * The demo's endpoints served over every shape of table source auto-inject must handle, each under
 * `/shapes/<shape>/<endpoint>` of one server (started by targetServer.ts). The variants take a tenant
 * from an API key's caller or, raw and unchecked, from a JWT's `org` claim (any JSON value), and let
 * admins without a tenant read across tenants (`required: false` with `allowUnscoped`).
 */
import { jwtAuth, type ServeAuthContext, type ServeHandler, type ServeRequest, type TenantConfig } from "queryserve"
import { type AnalyticsCaller, createAnalyticsApi } from "../../../examples/analytics/api.js"
import type { Db } from "../../../examples/analytics/sql.js"

/** Shapes whose every request must be filtered. */
export const FILTERED_SHAPES = ["plain", "callable", "class", "accessor", "frozen", "frozenClass", "inherited"] as const
/** Shapes auto-inject cannot see through: every tenant-scoped request must be refused (500). */
export const REFUSED_SHAPES = ["nested", "promise"] as const
export type Shape = (typeof FILTERED_SHAPES)[number] | (typeof REFUSED_SHAPES)[number]

/** The JWT claim the variants read the tenant from, as is. */
export const RAW_TENANT_CLAIM = "org"

export const shapePath = (shape: Shape): string => `/shapes/${shape}`

/**
 * A handle class keeping the database in `#private` state. `table` is a method (auto-inject calls it on
 * the original); `with` is an arrow property, since a method called through the wrapper has the wrapper
 * as `this` and could not read `#db`.
 */
class DbHandle {
  readonly #db: Db
  constructor(db: Db) {
    this.#db = db
  }
  table(name: string) {
    return this.#db.table(name)
  }
  readonly with: Db["with"] = (...args) => this.#db.with(...args)
  get dialect(): Db["dialect"] {
    return this.#db.dialect
  }
}

/** `table` and `with` as accessors that need `#private` state. */
class AccessorHandle {
  readonly #db: Db
  constructor(db: Db) {
    this.#db = db
  }
  get table(): Db["table"] {
    return (name) => this.#db.table(name)
  }
  get with(): Db["with"] {
    return (...args) => this.#db.with(...args)
  }
  get dialect(): Db["dialect"] {
    return this.#db.dialect
  }
}

const shapeOf = (shape: Shape, db: Db): unknown => {
  const members = { table: (name: string) => db.table(name), with: db.with, dialect: db.dialect }
  switch (shape) {
    case "plain":
      return members
    case "callable":
      // Knex-style: the handle itself is a function; here calling it is never needed by the metrics.
      return Object.assign((name: string) => db.table(name), members)
    case "class":
      return new DbHandle(db)
    case "accessor":
      return new AccessorHandle(db)
    case "frozen":
      return Object.freeze({ ...members })
    case "frozenClass":
      return Object.freeze(new DbHandle(db))
    case "inherited":
      return Object.create(members) as unknown
    case "nested":
      return { services: { db } }
    case "promise":
      return Promise.resolve(db)
  }
}

const rawTenant = (auth: ServeAuthContext | null): unknown =>
  auth !== null && "claims" in auth ? (auth.claims as Record<string, unknown>)[RAW_TENANT_CLAIM] : auth?.tenantId

const tenant: TenantConfig<AnalyticsCaller> = {
  extract: rawTenant,
  column: "tenant_id",
  mode: "auto-inject",
  required: false,
  allowUnscoped: (auth) => auth?.roles?.includes("admin") === true
}

/** One handler for every variant, picked by the second path segment. */
export const shapeVariantsHandler = (db: Db, keys: Readonly<Record<string, AnalyticsCaller>>, jwtSecret: string): ServeHandler => {
  const variants = new Map<string, ServeHandler>()
  for (const shape of [...FILTERED_SHAPES, ...REFUSED_SHAPES]) {
    const api = createAnalyticsApi(shapeOf(shape, db) as Db, { keys, queryLogging: false, basePath: shapePath(shape), tenant })
    api.useAuth(jwtAuth({ secret: jwtSecret }))
    variants.set(shape, api.handler)
  }
  const fallback = variants.get("plain")!
  return (request: ServeRequest) => (variants.get(request.path.split("/")[2] ?? "") ?? fallback)(request)
}
