/**
 * Isolation Postgres enforces: `orders` has a row-level-security policy on `app.tenant_id`, and the
 * API connects as a role that does not own the table. A handler's raw `SELECT * FROM orders` through
 * `postgresTenantSessions` returns only the caller's rows; a caller without a tenant is refused before
 * a connection is taken.
 */
import pg from "pg"
import { apiKeyAuth, defineServe, type PostgresPool, postgresTenantSessions, type ServeAuthContext, type TenantSession } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findPostgresBinForTests, type PostgresServer, startPostgres } from "../support/postgresServer.js"

const bin = findPostgresBinForTests("postgresTenantSessions")

const TENANTS = ["acme", "globex", "initech"] as const
const SETUP = `
  CREATE TABLE orders (id int PRIMARY KEY, tenant_id text NOT NULL, amount int NOT NULL);
  INSERT INTO orders SELECT n, (ARRAY['acme', 'globex', 'initech'])[1 + n % 3], n * 10 FROM generate_series(1, 30) AS n;
  ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
  ALTER TABLE orders FORCE ROW LEVEL SECURITY;
  CREATE POLICY tenant_isolation ON orders USING (tenant_id = current_setting('app.tenant_id'));
  CREATE ROLE app_user LOGIN;
  GRANT SELECT, INSERT ON orders TO app_user;
`

const callers: Record<string, ServeAuthContext> = {
  ...Object.fromEntries(TENANTS.map((tenant) => [`key-${tenant}`, { tenantId: tenant }])),
  "key-none": { roles: ["admin"] }
}

type Row = { id: number; tenant_id: string; amount: number }

describe.skipIf(bin === undefined)("postgresTenantSessions over a row-level-security policy", () => {
  let server: PostgresServer
  let owner: pg.Client
  let pool: pg.Pool
  let connects = 0
  /** The pool, counting the connections taken from it. */
  let counted: PostgresPool
  let expected: Map<string, Array<Row>>

  beforeAll(async () => {
    server = await startPostgres(bin!)
    owner = new pg.Client({ connectionString: server.url })
    await owner.connect()
    await owner.query(SETUP)
    // The owner sees every row only by bypassing the policy explicitly (FORCE applies to it too).
    await owner.query("SET row_security = off")
    const all = (await owner.query<Row>("SELECT * FROM orders ORDER BY id")).rows
    expected = new Map(TENANTS.map((tenant) => [tenant, all.filter((row) => row.tenant_id === tenant)]))
    pool = new pg.Pool({ connectionString: server.url.replace("postgres@", "app_user@"), max: 4 })
    // An idle client the server ends reports it on the pool (seen at teardown on a loaded machine): not this test's subject.
    pool.on("error", () => {})
    counted = { connect: () => (connects++, pool.connect()) }
  })
  afterAll(async () => {
    await pool?.end()
    await owner?.end()
    await server?.stop()
  })

  const apiOver = (sessionOf: (auth: ServeAuthContext | null) => TenantSession) =>
    defineServe({
      auth: apiKeyAuth({ keys: callers }),
      context: ({ auth }) => ({ orders: sessionOf(auth) }),
      queries: {
        // Hand-written SQL with no tenant filter: the policy does the filtering.
        raw: async ({ ctx }: { ctx: { orders: TenantSession } }) => (await ctx.orders.query<Row>("SELECT * FROM orders ORDER BY id")).rows
      }
    })

  const ask = async (api: ReturnType<typeof apiOver>, endpoint: string, key: string) => {
    const response = await api.handler({ method: "GET", path: `/api/analytics/${endpoint}`, headers: { "x-api-key": key } })
    return { status: response.status, body: JSON.parse(response.body ?? "null") as unknown }
  }

  it("a raw SELECT * FROM orders returns only the caller's rows, for every tenant, also when requests share connections", async () => {
    const sessions = postgresTenantSessions(counted)
    const api = apiOver((auth) => sessions.forTenant(auth?.tenantId))
    // More concurrent requests than pooled connections: each connection serves several tenants in turn.
    const keys = Array.from({ length: 30 }, (_, i) => TENANTS[i % TENANTS.length]!)
    const answers = await Promise.all(keys.map((tenant) => ask(api, "raw", `key-${tenant}`)))
    for (const [i, tenant] of keys.entries()) {
      expect(answers[i]).toEqual({ status: 200, body: expected.get(tenant) })
    }
  })

  it("a caller without a tenant is refused with 403 missing_tenant before any connection is taken", async () => {
    const sessions = postgresTenantSessions(counted)
    const api = apiOver((auth) => sessions.forTenant(auth?.tenantId))
    const before = connects
    for (const tenantless of [undefined, null, ""]) {
      expect(await ask(apiOver(() => sessions.forTenant(tenantless)), "raw", "key-acme")).toEqual({
        status: 403,
        body: { error: { type: "FORBIDDEN", message: "A tenant is required for this query: the caller has none", details: { reason: "missing_tenant" } } }
      })
    }
    expect((await ask(api, "raw", "key-none")).status).toBe(403)
    expect(connects).toBe(before)
  })

  it("the tenant is local to the transaction: a pooled connection keeps none afterwards", async () => {
    const sessions = postgresTenantSessions(pool)
    expect((await sessions.forTenant("globex").query<{ tenant: string }>("SELECT current_setting('app.tenant_id') AS tenant")).rows).toEqual([{ tenant: "globex" }])
    const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()))
    try {
      for (const client of clients) {
        // Without a session, the policy compares with an unset or empty setting: no rows, never another tenant's.
        const rows = (await client.query("SELECT * FROM orders").catch(() => ({ rows: [] }))).rows
        expect(rows).toEqual([])
      }
    } finally {
      for (const client of clients) client.release()
    }
  })

  it("transaction(): several statements under one tenant, rolled back when the work throws; the policy checks writes too", async () => {
    const acme = postgresTenantSessions(pool).forTenant("acme")
    const count = await acme.transaction(async (tx) => {
      await tx.query("INSERT INTO orders VALUES ($1, $2, $3)", [1001, "acme", 5])
      return (await tx.query<{ n: string }>("SELECT count(*) AS n FROM orders")).rows[0]!.n
    })
    expect(Number(count)).toBe(expected.get("acme")!.length + 1)
    await expect(acme.transaction(async (tx) => {
      await tx.query("INSERT INTO orders VALUES ($1, $2, $3)", [1002, "acme", 5])
      throw new Error("changed my mind")
    })).rejects.toThrow("changed my mind")
    // Writing another tenant's row breaks the policy: Postgres refuses it.
    await expect(acme.query("INSERT INTO orders VALUES ($1, $2, $3)", [1003, "globex", 5])).rejects.toThrow(/row-level security/)
    expect((await acme.query<Row>("SELECT id FROM orders WHERE id > 1000")).rows).toEqual([{ id: 1001 }])
  })

  it("takes another setting name, and refuses one that is no custom setting", async () => {
    await owner.query("CREATE TABLE notes (tenant text, body text); INSERT INTO notes VALUES ('acme', 'a'), ('globex', 'g');" +
      "ALTER TABLE notes ENABLE ROW LEVEL SECURITY; CREATE POLICY by_org ON notes USING (tenant = current_setting('myapp.org'));" +
      "GRANT SELECT ON notes TO app_user")
    const sessions = postgresTenantSessions(pool, { setting: "myapp.org" })
    expect((await sessions.forTenant("globex").query("SELECT body FROM notes")).rows).toEqual([{ body: "g" }])
    expect(() => postgresTenantSessions(pool, { setting: "search_path" })).toThrow(/custom setting name with a dot/)
  })
})
