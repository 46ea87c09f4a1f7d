/**
 * The tenant matrix: every tenant × every endpoint of the demo × every way of authenticating (API
 * key, JWT, missing, invalid, forged, another tenant's key asking for this tenant, admin), over GET
 * and the POST routes, all of a round sent at once. Every row returned is checked against SQL
 * written straight against the tables, per tenant, on a database built here with the same
 * generator: a row that is not the caller's own counts as a cross-tenant row.
 */
import { isDeepStrictEqual } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDemoDatabase, type DemoDatabase } from "../../../examples/analytics/dataset.js"
import { METRIC_CASES, type MetricCase, type Rows, sqlOn } from "../../demo/support/references.js"
import { figure } from "./report.js"
import { DEFAULT_TARGET, startTarget, type Target } from "./target.js"
import { ADMIN_KEY, TENANT_IDS, TENANT_KEYS, type TenantId } from "./targetConfig.js"
import { signTokens, type Tokens } from "./tokens.js"

export interface TenantMatrixSize {
  /** Times the whole matrix is sent, each round all at once. */
  readonly rounds: number
  /** The database the server under test reads: DuckDB (default) or chDB, ClickHouse in its process. */
  readonly engine?: "duckdb" | "clickhouse"
  /** Serve with the result cache on: the rounds after the first are answered from it. */
  readonly resultCache?: boolean
}

/** Endpoints that also have a POST route (JSON body) on the server under test. */
const POST_ENDPOINTS: ReadonlySet<string> = new Set(["revenueByRegion", "topProducts", "ordersExport", "tenantSummary"])

type Expected =
  | { readonly status: 200; readonly rowsOf: TenantId | "all" }
  | { readonly status: 401 | 403; readonly reason: string }

interface Probe {
  readonly label: string
  readonly caseName: string
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly input: Readonly<Record<string, string | number>>
  readonly expected: Expected
}

const ADMIN_ONLY = "tenantsOverview"

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

const probes = (tokens: Tokens): ReadonlyArray<Probe> =>
  TENANT_IDS.flatMap((tenant, index) => {
    const other = TENANT_IDS[(index + 1) % TENANT_IDS.length]!
    return Object.entries(METRIC_CASES).flatMap(([caseName, metric]) =>
      callers(tenant, other, tokens, metric).flatMap((caller) =>
        (POST_ENDPOINTS.has(metric.endpoint) ? (["GET", "POST"] as const) : (["GET"] as const)).map((method) => ({
          label: caller.label,
          caseName,
          method,
          path: metric.endpoint,
          headers: caller.headers,
          input: { ...metric.input, ...caller.spoof },
          expected: caller.expected
        }))
      )
    )
  })

interface Outcome {
  readonly status: number
  readonly json: unknown
  readonly cacheHit: boolean
}

const send = async (baseUrl: string, probe: Probe): Promise<Outcome> => {
  const query = new URLSearchParams(Object.entries(probe.input).map(([key, value]) => [key, String(value)]))
  const response = probe.method === "GET"
    ? await fetch(`${baseUrl}/${probe.path}?${query}`, { headers: probe.headers })
    : await fetch(`${baseUrl}/${probe.path}`, {
      method: "POST",
      headers: { ...probe.headers, "content-type": "application/json" },
      body: JSON.stringify(probe.input)
    })
  return { status: response.status, json: await response.json(), cacheHit: response.headers.get("x-cache") === "HIT" }
}

/** A row as text that does not depend on the order of its columns. */
const rowKey = (row: unknown): string =>
  JSON.stringify(typeof row === "object" && row !== null ? Object.entries(row).sort(([a], [b]) => a.localeCompare(b)) : row)

/** Rows of `answer` that are not among `expected` (as a multiset): rows that belong to someone else. */
const foreignRows = (answer: ReadonlyArray<unknown>, expected: Rows): number => {
  const remaining = new Map<string, number>()
  for (const row of expected) remaining.set(rowKey(row), (remaining.get(rowKey(row)) ?? 0) + 1)
  let foreign = 0
  for (const row of answer) {
    const key = rowKey(row)
    const left = remaining.get(key) ?? 0
    if (left === 0) foreign++
    else remaining.set(key, left - 1)
  }
  return foreign
}

export const tenantMatrixSuite = ({ rounds, engine = "duckdb", resultCache = false }: TenantMatrixSize): void => {
  const onEngine = engine === "clickhouse" ? " on ClickHouse" : ""
  describe(`tenant matrix${onEngine}, ${rounds} rounds${resultCache ? ", result cache on" : ""}`, () => {
    let target: Target
    let reference: DemoDatabase
    let tokens: Tokens
    /** Reference rows per metric case and tenant ("all" for the admin overview). */
    const expectedRows = new Map<string, Rows>()
    let baseUrl: string

    beforeAll(async () => {
      ;[target, reference, tokens] = await Promise.all([
        startTarget({ engine, ...(resultCache && { resultCache }) }),
        createDemoDatabase({ rows: DEFAULT_TARGET.rows, log: () => {} }),
        signTokens()
      ])
      baseUrl = `http://127.0.0.1:${target.ports().demo}/api/analytics`
      const query = sqlOn(reference.connection)
      for (const [caseName, metric] of Object.entries(METRIC_CASES)) {
        for (const tenant of [...TENANT_IDS, "all"] as const) {
          expectedRows.set(`${caseName}/${tenant}`, await metric.reference(query, tenant === "all" ? null : tenant))
        }
      }
    })
    afterAll(async () => {
      await target?.stop()
      await reference?.close()
    })

    it("covers every endpoint the demo serves", async () => {
      const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> }
      const served = Object.keys(document.paths).map((path) => path.slice("/api/analytics/".length))
      const covered = Object.values(METRIC_CASES).map((metric) => metric.endpoint)
      expect(new Set(covered)).toEqual(new Set(served))
    })

    it("0 cross-tenant rows: each caller gets its own tenant's rows, the admin every tenant's, the rest 401/403", async () => {
      const matrix = probes(tokens)
      let rowsChecked = 0
      let crossTenantRows = 0
      let cacheHits = 0
      const unexpected: Array<string> = []
      for (let round = 0; round < rounds; round++) {
        const outcomes = await Promise.all(matrix.map((probe) => send(baseUrl, probe)))
        matrix.forEach((probe, i) => {
          const outcome = outcomes[i]!
          if (outcome.cacheHit) cacheHits++
          const describeProbe = `${probe.method} ${probe.caseName} as ${probe.label} of ${JSON.stringify(probe.headers).slice(0, 60)}`
          if (probe.expected.status !== 200) {
            const reason = (outcome.json as { error?: { details?: { reason?: unknown } } }).error?.details?.reason
            if (outcome.status !== probe.expected.status || reason !== probe.expected.reason) {
              unexpected.push(`${describeProbe}: ${outcome.status} ${JSON.stringify(outcome.json).slice(0, 200)}`)
            }
            return
          }
          const expected = expectedRows.get(`${probe.caseName}/${probe.expected.rowsOf}`)!
          const rows = Array.isArray(outcome.json) ? outcome.json : []
          rowsChecked += rows.length
          crossTenantRows += foreignRows(rows, expected)
          if (outcome.status !== 200 || !isDeepStrictEqual(outcome.json, expected)) {
            unexpected.push(`${describeProbe}: ${outcome.status}, ${rows.length} rows instead of ${expected.length}`)
          }
        })
      }
      const endpoints = new Set(Object.values(METRIC_CASES).map((metric) => metric.endpoint)).size
      const authPaths = new Set(matrix.map((probe) => probe.label)).size
      figure(
        `tenants${onEngine}: ${TENANT_IDS.length} tenants × ${endpoints} endpoints × ${authPaths} auth paths (GET and POST) × ${rounds} rounds = ` +
          `${matrix.length * rounds} requests, ${rowsChecked} rows checked against SQL, ${crossTenantRows} cross-tenant rows, ` +
          `${unexpected.length} unexpected answers` +
          (resultCache ? `; result cache on: ${cacheHits} answers from the cache` : "")
      )
      expect(unexpected.slice(0, 5)).toEqual([])
      expect(crossTenantRows).toBe(0)
      expect(rowsChecked).toBeGreaterThan(0)
      // With the cache on, the checks above covered answers that came from it.
      if (resultCache) expect(cacheHits).toBeGreaterThan(0)
      else expect(cacheHits).toBe(0)
    })
  })
}
