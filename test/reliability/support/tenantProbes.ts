/**
 * What the tenant suites share: a probe (one request and the answer it is due), sending it, and
 * judging the answer against SQL written straight against the tables, per tenant.
 */
import { isDeepStrictEqual } from "node:util"
import { type Rows, type SqlQuery, TENANT_CASES } from "../../demo/support/references.js"

/** The answer a probe is due: a tenant's rows (or every tenant's), or an error with its reason. */
export type Expected =
  | { readonly status: 200; readonly rowsOf: string | "all" }
  | { readonly status: 401 | 403; readonly reason: string }
  | { readonly status: 429 | 500; readonly type: string }

export interface Probe {
  readonly label: string
  readonly caseName: string
  readonly method: "GET" | "POST"
  /** The path after the host, e.g. `/api/analytics/revenueByDay`. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly input: Readonly<Record<string, string | number>>
  readonly expected: Expected
}

export interface Outcome {
  readonly status: number
  readonly json: unknown
  /** The answer came from the result cache (`x-cache: HIT`). */
  readonly cacheHit: boolean
}

export const send = async (origin: string, probe: Probe): Promise<Outcome> => {
  const query = new URLSearchParams(Object.entries(probe.input).map(([key, value]) => [key, String(value)]))
  const response = probe.method === "GET"
    ? await fetch(`${origin}${probe.path}?${query}`, { headers: probe.headers })
    : await fetch(`${origin}${probe.path}`, {
      method: "POST",
      headers: { ...probe.headers, "content-type": "application/json" },
      body: JSON.stringify(probe.input)
    })
  return { status: response.status, json: await response.json(), cacheHit: response.headers.get("x-cache") === "HIT" }
}

/** The rows of an answer: the answer itself, or a page's `data`; none for anything else. */
const rowsOf = (json: unknown): ReadonlyArray<unknown> => {
  if (Array.isArray(json)) return json
  const data = (json as { data?: unknown } | null)?.data
  return Array.isArray(data) ? data : []
}

/** A row as text that does not depend on the order of its columns. */
const rowKey = (row: unknown): string =>
  JSON.stringify(typeof row === "object" && row !== null ? Object.entries(row).sort(([a], [b]) => a.localeCompare(b)) : row)

/** Rows of `answer` that are not among `expected` (as a multiset): rows that belong to someone else. */
export const foreignRows = (answer: ReadonlyArray<unknown>, expected: Rows): number => {
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

/** Reference rows per metric case and tenant ("all": every tenant's), computed once each. */
export class References {
  private readonly cache = new Map<string, Promise<Rows>>()
  constructor(private readonly query: SqlQuery) {}

  rows(caseName: string, tenant: string | "all"): Promise<Rows> {
    const key = `${caseName}/${tenant}`
    let rows = this.cache.get(key)
    if (rows === undefined) {
      rows = TENANT_CASES[caseName]!.reference(this.query, tenant === "all" ? null : tenant)
      this.cache.set(key, rows)
    }
    return rows
  }
}

/** Tallies of judged answers: rows checked, rows of another tenant, and answers other than due. */
export class Verdicts {
  rowsChecked = 0
  crossTenantRows = 0
  readonly unexpected: Array<string> = []

  async judge(references: References, probe: Probe, outcome: Outcome): Promise<void> {
    const describeProbe = `${probe.method} ${probe.path} (${probe.caseName}) as ${probe.label}`
    const expected = probe.expected
    if (expected.status !== 200) {
      const error = (outcome.json as { error?: { type?: unknown; details?: { reason?: unknown } } }).error
      const matches = outcome.status === expected.status &&
        ("reason" in expected ? error?.details?.reason === expected.reason : error?.type === expected.type)
      if (!matches) this.unexpected.push(`${describeProbe}: ${outcome.status} ${JSON.stringify(outcome.json).slice(0, 200)}`)
      // An error answer has no rows; a 200 where an error was due is counted as wholly foreign.
      if (outcome.status === 200) this.crossTenantRows += rowsOf(outcome.json).length
      return
    }
    const rows = await references.rows(probe.caseName, expected.rowsOf)
    const answer = rowsOf(outcome.json)
    this.rowsChecked += answer.length
    this.crossTenantRows += foreignRows(answer, rows)
    if (outcome.status !== 200 || !isDeepStrictEqual(answer, rows)) {
      this.unexpected.push(`${describeProbe}: ${outcome.status}, ${answer.length} rows instead of ${rows.length}`)
    }
  }
}
