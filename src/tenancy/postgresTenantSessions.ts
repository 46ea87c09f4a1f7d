import { Forbidden } from "../domain/errors.js"

/** What a query answers: a node-postgres result has `rows` (and more, kept as they are). */
export interface PostgresQueryResult<Row> {
  readonly rows: Array<Row>
}

/** A pooled connection, as node-postgres' `PoolClient` is one. */
export interface PostgresPoolClient {
  query(sql: string, params?: Array<unknown>): Promise<PostgresQueryResult<unknown>>
  /** Given an error, the pool closes the connection instead of reusing it. */
  release(error?: Error): void
}

/** A connection pool, as node-postgres' `Pool` is one: `pg` itself is the application's dependency, not queryserve's. */
export interface PostgresPool {
  connect(): Promise<PostgresPoolClient>
}

/** Runs SQL in a transaction whose tenant setting is the caller's. */
export interface TenantQueries {
  query<Row = Record<string, unknown>>(sql: string, params?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<Row>>
}

/** One caller's access: every statement runs in a transaction that first sets the caller's tenant. */
export interface TenantSession extends TenantQueries {
  /** The tenant the session sets; null for a caller without one, whose every query is refused. */
  readonly tenantId: string | null
  /** Runs `work`'s statements in one transaction (committed when it resolves, rolled back when it throws). */
  transaction<A>(work: (tx: TenantQueries) => Promise<A>): Promise<A>
}

export interface PostgresTenantSessionsOptions {
  /**
   * The setting that carries the tenant, read by row-level-security policies with
   * `current_setting('app.tenant_id')`. A custom setting needs a dot in its name. Default `app.tenant_id`.
   */
  readonly setting?: string
}

export interface PostgresTenantSessions {
  /** The session of a caller: give it `ctx.tenantId`. No tenant (null, undefined, "") refuses every query. */
  forTenant(tenantId: string | null | undefined): TenantSession
}

const CUSTOM_SETTING = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)+$/

const missingTenant = (): Forbidden =>
  new Forbidden({ message: "A tenant is required for this query: the caller has none", reason: "missing_tenant" })

/**
 * Sessions whose queries Postgres itself scopes to the caller's tenant: each runs in a transaction
 * that first does `SELECT set_config(setting, tenantId, true)` (local to that transaction, so a
 * pooled connection never carries one caller's tenant to the next), and a row-level-security policy
 * on each table compares its tenant column with the setting. Raw SQL, which auto-inject cannot see,
 * is filtered too. A caller without a tenant is refused (403 `missing_tenant`) before a connection is
 * taken. Throws a TypeError when `setting` is no custom setting name.
 */
export const postgresTenantSessions = (pool: PostgresPool, options: PostgresTenantSessionsOptions = {}): PostgresTenantSessions => {
  const setting = options.setting ?? "app.tenant_id"
  if (!CUSTOM_SETTING.test(setting)) {
    throw new TypeError(`postgresTenantSessions: setting must be a custom setting name with a dot, such as "app.tenant_id", not ${JSON.stringify(setting)}`)
  }

  const inTransaction = async <A>(tenantId: string, work: (tx: TenantQueries) => Promise<A>): Promise<A> => {
    const client = await pool.connect()
    let broken: Error | undefined
    try {
      await client.query("BEGIN")
      try {
        await client.query("SELECT set_config($1, $2, true)", [setting, tenantId])
        const result = await work({
          query: <Row>(sql: string, params?: ReadonlyArray<unknown>) =>
            client.query(sql, params === undefined ? undefined : [...params]) as Promise<PostgresQueryResult<Row>>
        })
        await client.query("COMMIT")
        return result
      } catch (error) {
        // A connection that cannot even roll back is closed, not handed to the next caller.
        await client.query("ROLLBACK").catch((rollbackFailed: unknown) => {
          broken = rollbackFailed instanceof Error ? rollbackFailed : new Error(String(rollbackFailed))
        })
        throw error
      }
    } finally {
      client.release(broken)
    }
  }

  return {
    forTenant: (given) => {
      const tenantId = typeof given === "string" && given.length > 0 ? given : null
      const transaction = <A>(work: (tx: TenantQueries) => Promise<A>): Promise<A> =>
        tenantId === null ? Promise.reject(missingTenant()) : inTransaction(tenantId, work)
      return {
        tenantId,
        transaction,
        query: <Row>(sql: string, params?: ReadonlyArray<unknown>) => transaction((tx) => tx.query<Row>(sql, params))
      }
    }
  }
}
