/**
 * The tenant matrix: every tenant × every endpoint of the demo × every way of authenticating (API
 * key, JWT, missing, invalid, forged, another tenant's key asking for this tenant, admin), over GET
 * and the POST routes, all of a round sent at once. Every row returned is checked against SQL
 * written straight against the tables, per tenant, on a database built here with the same
 * generator: a row that is not the caller's own counts as a cross-tenant row. The same server's
 * shape variants (tenantShapes.ts) run the endpoints over every shape of table source, malformed
 * claims and unscoped access, and a generated property.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDemoDatabase, type DemoDatabase } from "../../../examples/analytics/dataset.js"
import { type MetricCase, sqlOn, TENANT_CASES } from "../../demo/support/references.js"
import { figure } from "./report.js"
import { DEFAULT_TARGET, startTarget, type Target } from "./target.js"
import { ADMIN_KEY, AUTH_FAILURE_LIMIT, TENANT_IDS, TENANT_KEYS, type TenantId } from "./targetConfig.js"
import { type Expected, type Probe, References, send, Verdicts } from "./tenantProbes.js"
import { checkShapeMatrix, checkShapeProperty } from "./tenantShapes.js"
import { signTokens, type Tokens } from "./tokens.js"

export interface TenantMatrixSize {
  /** Times the whole matrix is sent, each round all at once. */
  readonly rounds: number
  /**
   * Also run the shape variants and this many generated property cases over claims, roles and
   * table-source shapes. Default: neither.
   */
  readonly generatedCases?: number
  /** The database the server under test reads: DuckDB (default) or chDB, ClickHouse in its process. */
  readonly engine?: "duckdb" | "clickhouse"
  /** Serve with the result cache on: the rounds after the first are answered from it. */
  readonly resultCache?: boolean
}

/** Endpoints that also have a POST route (JSON body) on the server under test. */
const POST_ENDPOINTS: ReadonlySet<string> = new Set(["revenueByRegion", "topProducts", "ordersExport", "tenantSummary"])

const ADMIN_ONLY = "tenantsOverview"
const BASE_PATH = "/api/analytics"

/** The answer each kind of caller must get from an endpoint. */
const own = (tenant: TenantId, metric: MetricCase): Expected =>
  metric.endpoint === ADMIN_ONLY ? { status: 403, reason: "missing_role" } : { status: 200, rowsOf: tenant }
const admin = (metric: MetricCase): Expected =>
  metric.endpoint === ADMIN_ONLY ? { status: 200, rowsOf: "all" } : { status: 403, reason: "missing_tenant" }

interface Caller {
  readonly label: string
  readonly headers: Readonly<Record<string, string>>
  /** Input fields that name a tenant, which must change nothing. */
  readonly spoof?: Readonly<Record<string, string>>
  readonly expected: Expected
}

/** Every caller of the matrix for one tenant, as request headers and the answer due. */
const callers = (tenant: TenantId, other: TenantId, tokens: Tokens, metric: MetricCase): ReadonlyArray<Caller> => [
  { label: "API key", headers: { "x-api-key": TENANT_KEYS[tenant] }, expected: own(tenant, metric) },
  { label: "JWT", headers: { authorization: `Bearer ${tokens.tenant[tenant]}` }, expected: own(tenant, metric) },
  {
    // The other tenant's key, asking for this tenant every way a client could try: header, query, body.
    label: "other tenant's key",
    headers: { "x-api-key": TENANT_KEYS[other], "x-tenant-id": tenant },
    spoof: { tenant_id: tenant, tenantId: tenant },
    expected: own(other, metric)
  },
  { label: "missing", headers: {}, expected: { status: 401, reason: "missing_credentials" } },
  { label: "invalid key", headers: { "x-api-key": `${TENANT_KEYS[tenant]}-x` }, expected: { status: 401, reason: "invalid_credentials" } },
  ...tokens.refused.map((token): Caller => ({
    label: "refused JWT",
    headers: { authorization: `Bearer ${token}` },
    expected: { status: 401, reason: "invalid_credentials" }
  })),
  { label: "admin key", headers: { "x-api-key": ADMIN_KEY }, expected: admin(metric) },
  { label: "admin JWT", headers: { authorization: `Bearer ${tokens.admin}` }, expected: admin(metric) }
]

/**
 * Each probe comes from an address of its own (the demo trusts one proxy), so the key-guessing limit
 * never sees `max` failures from one caller here; `guessing` below is where it does.
 */
const fromAddress = (round: number, index: number): Readonly<Record<string, string>> => ({
  "x-forwarded-for": `10.${round % 256}.${Math.floor(index / 256) % 256}.${index % 256}`
})

const probes = (tokens: Tokens, round: number): ReadonlyArray<Probe> =>
  TENANT_IDS.flatMap((tenant, index) => {
    const other = TENANT_IDS[(index + 1) % TENANT_IDS.length]!
    return Object.entries(TENANT_CASES).flatMap(([caseName, metric]) =>
      callers(tenant, other, tokens, metric).flatMap((caller) =>
        (POST_ENDPOINTS.has(metric.endpoint) ? (["GET", "POST"] as const) : (["GET"] as const)).map((method) => ({
          label: caller.label,
          caseName,
          method,
          path: `${BASE_PATH}/${metric.endpoint}`,
          headers: caller.headers,
          input: { ...metric.input, ...caller.spoof },
          expected: caller.expected
        }))
      )
    )
  }).map((probe, index) => ({ ...probe, headers: { ...probe.headers, ...fromAddress(round, index) } }))

/** `max` wrong keys from one address, then that address's good key: 429 before any strategy; another address is served. */
const guessing = (origin: string, tenant: TenantId): Promise<ReadonlyArray<number>> => {
  const from = (address: string, key: string) =>
    fetch(`${origin}${BASE_PATH}/tenantSummary`, { headers: { "x-api-key": key, "x-forwarded-for": address } }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    })
  const guesser = `192.0.2.${TENANT_IDS.indexOf(tenant) + 1}`
  return (async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < AUTH_FAILURE_LIMIT.max; i++) statuses.push(await from(guesser, `guess-${i}`))
    statuses.push(await from(guesser, TENANT_KEYS[tenant]), await from("198.51.100.200", TENANT_KEYS[tenant]))
    return statuses
  })()
}

export const tenantMatrixSuite = ({ rounds, generatedCases, engine = "duckdb", resultCache = false }: TenantMatrixSize): void => {
  const onEngine = engine === "clickhouse" ? " on ClickHouse" : ""
  const withShapes = generatedCases === undefined ? "" : `, shape variants, ${generatedCases} generated cases`
  describe(`tenant matrix${onEngine}, ${rounds} rounds${withShapes}${resultCache ? ", result cache on" : ""}`, () => {
    let target: Target
    let reference: DemoDatabase
    let tokens: Tokens
    let references: References
    const origin = (port: "demo" | "shapes") => `http://127.0.0.1:${target.ports()[port]}`

    beforeAll(async () => {
      ;[target, reference, tokens] = await Promise.all([
        startTarget({ engine, ...(resultCache && { resultCache }) }),
        createDemoDatabase({ rows: DEFAULT_TARGET.rows, log: () => {} }),
        signTokens()
      ])
      references = new References(sqlOn(reference.connection))
    })
    afterAll(async () => {
      await target?.stop()
      await reference?.close()
    })

    it("covers every endpoint the demo serves", async () => {
      const document = (await (await fetch(`${origin("demo")}${BASE_PATH}/openapi.json`)).json()) as { paths: Record<string, unknown> }
      const served = Object.keys(document.paths).map((path) => path.slice(`${BASE_PATH}/`.length))
      const covered = Object.values(TENANT_CASES).map((metric) => metric.endpoint)
      expect(new Set(covered)).toEqual(new Set(served))
    })

    it("0 cross-tenant rows: each caller gets its own tenant's rows, the admin every tenant's, the rest 401/403", async () => {
      const verdicts = new Verdicts()
      let sent = 0
      let cacheHits = 0
      for (let round = 0; round < rounds; round++) {
        const matrix = probes(tokens, round)
        const outcomes = await Promise.all(matrix.map((probe) => send(origin("demo"), probe)))
        for (const [i, probe] of matrix.entries()) await verdicts.judge(references, probe, outcomes[i]!)
        cacheHits += outcomes.filter((outcome) => outcome.cacheHit).length
        sent += matrix.length
      }
      const matrix = probes(tokens, 0)
      const endpoints = new Set(Object.values(TENANT_CASES).map((metric) => metric.endpoint)).size
      const authPaths = new Set(matrix.map((probe) => probe.label)).size
      const guesses = await Promise.all(TENANT_IDS.map((tenant) => guessing(origin("demo"), tenant)))
      const guessed = [...Array(AUTH_FAILURE_LIMIT.max).fill(401), 429, 200]
      figure(
        `tenants${onEngine}: ${TENANT_IDS.length} tenants × ${endpoints} endpoints × ${authPaths} auth paths (GET and POST) × ${rounds} rounds = ` +
          `${sent} requests, ${verdicts.rowsChecked} rows checked against SQL, ${verdicts.crossTenantRows} cross-tenant rows, ` +
          `${verdicts.unexpected.length} unexpected answers; key guessing from one address: ${guesses[0]!.join(" ")}` +
          (resultCache ? `; result cache on: ${cacheHits} answers from the cache` : "")
      )
      expect(verdicts.unexpected.slice(0, 5)).toEqual([])
      expect(verdicts.crossTenantRows).toBe(0)
      expect(verdicts.rowsChecked).toBeGreaterThan(0)
      // With the cache on, the checks above covered answers that came from it.
      if (resultCache) expect(cacheHits).toBeGreaterThan(0)
      else expect(cacheHits).toBe(0)
      expect(guesses).toEqual(TENANT_IDS.map(() => guessed))
    })

    if (generatedCases === undefined) return

    it("over every shape of table source, malformed claims and unscoped access: 0 cross-tenant rows, refusals where unfilterable", () =>
      checkShapeMatrix(origin("shapes"), references, rounds))

    it(`a generated property over claims, roles and shapes (${generatedCases} cases): no answer holds another tenant's row`, () =>
      checkShapeProperty(origin("shapes"), references, generatedCases))
  })
}
