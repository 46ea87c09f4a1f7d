/**
 * The tenant matrix over the shape variants (shapeVariants.ts): every shape of table source × tenant ×
 * metric, with API keys and with JWTs whose raw `org` claim is the tenant; callers without a tenant,
 * with and without the admin role that `allowUnscoped` names; malformed claims; and a fast-check
 * property over generated claims, roles and shapes. Every answer is judged exactly: the caller's own
 * rows, every tenant's for an admin without a tenant, 403 for anyone else without one, and 500 where
 * the shape cannot be filtered.
 */
import fc from "fast-check"
import { SignJWT } from "jose"
import { expect } from "vitest"
import { METRIC_CASES, type MetricCase } from "../../demo/support/references.js"
import { figure } from "./report.js"
import { FILTERED_SHAPES, RAW_TENANT_CLAIM, REFUSED_SHAPES, type Shape, shapePath } from "./shapeVariants.js"
import { ADMIN_KEY, JWT_SECRET, TENANT_IDS, TENANT_KEYS } from "./targetConfig.js"
import { type Expected, type Probe, type References, send, Verdicts } from "./tenantProbes.js"

const SHAPES: ReadonlyArray<Shape> = [...FILTERED_SHAPES, ...REFUSED_SHAPES]
const REFUSED: ReadonlySet<Shape> = new Set(REFUSED_SHAPES)
const CASES = Object.keys(METRIC_CASES)

/** Claims that are no tenant id (after the JSON round trip a token makes), and two that are. */
const MALFORMED_CLAIMS: ReadonlyArray<unknown> = ["", null, true, false, [], ["acme"], {}, { id: "acme" }, [1], { tenant_id: "globex" }]
const ODD_TENANTS: ReadonlyArray<unknown> = [0, 42, "0", " acme", "ACME"]

/** The test's own reading of the rule: a non-empty string, or a finite number as its string. */
const tenantIdOf = (value: unknown): string | null =>
  typeof value === "string" ? (value.length > 0 ? value : null) : typeof value === "number" && Number.isFinite(value) ? String(value) : null

const REFUSAL: Expected = { status: 500, type: "INTERNAL_SERVER_ERROR" }

/** The answer due to a caller with this raw tenant claim and these roles, on this shape. */
const expectedFor = (shape: Shape, metric: MetricCase, rawTenant: unknown, roles: ReadonlyArray<string>): Expected => {
  const admin = roles.includes("admin")
  if (metric.endpoint === "tenantsOverview") {
    if (!admin) return { status: 403, reason: "missing_role" }
    return REFUSED.has(shape) ? REFUSAL : { status: 200, rowsOf: "all" }
  }
  const tenant = tenantIdOf(rawTenant)
  if (tenant === null && !admin) return { status: 403, reason: "missing_tenant" }
  // Refused shapes: auto-inject refuses a caller with a tenant; an unscoped admin's handler finds no usable db.
  if (REFUSED.has(shape)) return REFUSAL
  return { status: 200, rowsOf: tenant ?? "all" }
}

const tokens = new Map<string, Promise<string>>()
/** A valid token with `org` set to `org` as is (absent when undefined). */
const tokenFor = (org: unknown, roles: ReadonlyArray<string>): Promise<string> => {
  const claims = { sub: "shapes", roles, ...(org === undefined ? {} : { [RAW_TENANT_CLAIM]: org }) }
  const key = JSON.stringify(claims)
  let token = tokens.get(key)
  if (token === undefined) {
    token = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt().setExpirationTime("1h").sign(new TextEncoder().encode(JWT_SECRET))
    tokens.set(key, token)
  }
  return token
}

const probe = (shape: Shape, caseName: string, label: string, headers: Record<string, string>, expected: Expected): Probe => {
  const metric = METRIC_CASES[caseName]!
  return { label: `${label} on ${shape}`, caseName, method: "GET", path: `${shapePath(shape)}/${metric.endpoint}`, headers, input: metric.input, expected }
}

const jwtProbe = async (shape: Shape, caseName: string, org: unknown, roles: ReadonlyArray<string>): Promise<Probe> => {
  // What the server reads is the claim after the token's JSON round trip (NaN becomes null, -0 becomes 0).
  const sent = org === undefined ? undefined : (JSON.parse(JSON.stringify([org])) as Array<unknown>)[0]
  const expected = expectedFor(shape, METRIC_CASES[caseName]!, sent, roles)
  return probe(shape, caseName, `JWT org=${JSON.stringify(org)} roles=${roles.join(",")}`, { authorization: `Bearer ${await tokenFor(org, roles)}` }, expected)
}

/**
 * The whole matrix, or (`full` false, for `npm test`) each shape with one tenant (in turn) and each odd
 * claim on one metric case (in turn), the plain shape only.
 */
const shapeProbes = async (full: boolean): Promise<ReadonlyArray<Probe>> => {
  const probes: Array<Promise<Probe> | Probe> = []
  for (const [shapeIndex, shape] of SHAPES.entries()) {
    for (const [caseIndex, caseName] of CASES.entries()) {
      const metric = METRIC_CASES[caseName]!
      for (const tenant of full ? TENANT_IDS : [TENANT_IDS[shapeIndex % TENANT_IDS.length]!]) {
        probes.push(probe(shape, caseName, `${tenant} key`, { "x-api-key": TENANT_KEYS[tenant] }, expectedFor(shape, metric, tenant, ["analyst"])))
        probes.push(jwtProbe(shape, caseName, tenant, ["analyst"]))
        // An admin with a tenant stays filtered, whatever allowUnscoped says.
        probes.push(jwtProbe(shape, caseName, tenant, ["admin"]))
      }
      probes.push(probe(shape, caseName, "admin key", { "x-api-key": ADMIN_KEY }, expectedFor(shape, metric, undefined, ["admin"])))
      // Malformed and odd claims on two shapes (the property covers the rest).
      if (shape !== "plain" && (shape !== "nested" || !full)) continue
      for (const [claimIndex, org] of [...MALFORMED_CLAIMS, ...ODD_TENANTS, undefined].entries()) {
        if (!full && claimIndex % CASES.length !== caseIndex) continue
        for (const roles of [["analyst"], ["admin"]]) probes.push(jwtProbe(shape, caseName, org, roles))
      }
    }
  }
  return Promise.all(probes)
}

export const checkShapeMatrix = async (origin: string, references: References, rounds: number): Promise<void> => {
  const verdicts = new Verdicts()
  const full = rounds > 1
  const probes = await shapeProbes(full)
  // A quarter of the main matrix's rounds: each has several times as many requests.
  const shapeRounds = Math.ceil(rounds / 4)
  for (let round = 0; round < shapeRounds; round++) {
    const outcomes = await Promise.all(probes.map((p) => send(origin, p)))
    for (const [i, p] of probes.entries()) await verdicts.judge(references, p, outcomes[i]!)
  }
  const refusals = probes.filter((p) => p.expected.status === 500).length * shapeRounds
  figure(
    `tenant shapes: ${SHAPES.length} shapes of table source (${FILTERED_SHAPES.join(", ")}; ${REFUSED_SHAPES.join(", ")} refused) × ` +
      `${full ? TENANT_IDS.length : 1} tenants × ${CASES.length} metric cases × keys, JWTs, admins with and without a tenant, ` +
      `${MALFORMED_CLAIMS.length} malformed and ${ODD_TENANTS.length} odd claims × ${shapeRounds} rounds = ${probes.length * shapeRounds} requests, ` +
      `${verdicts.rowsChecked} rows checked against SQL, ${verdicts.crossTenantRows} cross-tenant rows, ${refusals} refusals due, ` +
      `${verdicts.unexpected.length} unexpected answers`
  )
  expect(verdicts.unexpected.slice(0, 5)).toEqual([])
  expect(verdicts.crossTenantRows).toBe(0)
}

/** Claims a token may carry: real and odd tenant ids, malformed values, and anything JSON can hold. */
const claimArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(...TENANT_IDS),
  fc.constantFrom<unknown>(...MALFORMED_CLAIMS, ...ODD_TENANTS, undefined),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 2 })
)

export const checkShapeProperty = async (origin: string, references: References, cases: number): Promise<void> => {
  const verdicts = new Verdicts()
  let sent = 0
  const generated = fc.record({
    shape: fc.constantFrom(...SHAPES),
    caseName: fc.constantFrom(...CASES),
    org: claimArbitrary,
    roles: fc.subarray(["admin", "analyst"])
  })
  await fc.assert(
    fc.asyncProperty(generated, async ({ shape, caseName, org, roles }) => {
      const p = await jwtProbe(shape, caseName, org, roles)
      const before = [verdicts.crossTenantRows, verdicts.unexpected.length]
      await verdicts.judge(references, p, await send(origin, p))
      sent++
      return verdicts.crossTenantRows === before[0] && verdicts.unexpected.length === before[1]
    }),
    { numRuns: cases }
  ).finally(() =>
    figure(
      `tenant property: ${sent} generated requests (claims: tenant ids, malformed values, strings, numbers, JSON; ` +
        `roles; ${SHAPES.length} shapes; ${CASES.length} metric cases), ${verdicts.rowsChecked} rows checked against SQL, ` +
        `${verdicts.crossTenantRows} cross-tenant rows, ${verdicts.unexpected.length} unexpected answers`
    )
  )
}
