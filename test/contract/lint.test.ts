/**
 * Third-party linters on the documents queryserve serves: Redocly's recommended rules and Spectral's
 * `spectral:oas` ruleset, run as libraries. No errors; the warnings left are listed (and justified
 * in docs/schemas-and-openapi.md), so a new one fails here until it is fixed or justified.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core"
import { Json } from "@stoplight/spectral-parsers"
import { oas } from "@stoplight/spectral-rulesets"
import { Schema } from "effect"
import { defineServe, rateLimit, withSecurityScheme } from "queryserve"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { createAnalyticsApi } from "../../examples/analytics/api.js"
import { createDb } from "../../examples/analytics/sql.js"
import { get } from "../support/requests.js"

interface Finding {
  readonly linter: "redocly" | "spectral"
  readonly severity: "error" | "warning"
  readonly rule: string
  readonly where: string
}

const SPECTRAL_SEVERITY = ["error", "warning", "info", "hint"] as const

const lint = async (source: string): Promise<ReadonlyArray<Finding>> => {
  const config = await createConfig({ extends: ["recommended"] })
  const redocly = await lintFromString({ source, absoluteRef: "/openapi.json", config })
  const spectral = new Spectral()
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] })
  const results = await spectral.run(new Document(source, Json, "/openapi.json"))
  return [
    ...redocly.map((problem): Finding => ({
      linter: "redocly",
      severity: problem.severity === "error" ? "error" : "warning",
      rule: problem.ruleId,
      where: problem.location[0]?.pointer ?? ""
    })),
    ...results
      .filter((result) => result.severity <= 1)
      .map((result): Finding => ({
        linter: "spectral",
        severity: SPECTRAL_SEVERITY[result.severity] as Finding["severity"],
        rule: String(result.code),
        where: result.path.join(".")
      }))
  ]
}

const documentText = async (api: { handler: ReturnType<typeof defineServe>["handler"] }, path = "/api/analytics/openapi.json") => {
  const response = await api.handler(get(path))
  expect(response.status).toBe(200)
  return response.body!
}

describe("Redocly (recommended) and Spectral (spectral:oas) on the served documents", () => {
  it("the demo's document: no errors, and only the warnings docs/schemas-and-openapi.md justifies", async () => {
    // The definition alone: no query runs, so the database is never reached.
    const api = createAnalyticsApi(createDb({ run: () => Promise.reject(new Error("not used")) } as never), { queryLogging: false })
    const findings = await lint(await documentText(api))
    console.log(`[lint] demo document: ${findings.map((f) => `${f.linter} ${f.severity} ${f.rule} at ${f.where || "/"}`).join("; ") || "clean"}`)
    expect(findings.filter((finding) => finding.severity === "error")).toEqual([])
    expect(findings).toEqual([{ linter: "spectral", severity: "warning", rule: "info-contact", where: "info" }])
  }, 60_000)

  it("a document using every feature (auth, public routes, caching, rate limits, lists, every schema library): no errors", async () => {
    const apiKey = withSecurityScheme(() => null, { type: "apiKey", in: "header", name: "x-api-key" })
    const api = defineServe({
      auth: apiKey,
      openapi: {
        info: { title: "Everything", version: "1.2.3", description: "All at once.", license: { name: "MIT", identifier: "MIT" }, contact: { name: "Team" } },
        servers: [{ url: "https://analytics.acme.test" }],
        tags: [{ name: "rows", description: "Lists." }, { name: "misc", description: "The rest." }]
      },
      queries: {
        rows: {
          tags: ["rows"],
          cacheTtlMs: 60_000,
          summary: "Rows",
          description: "Rows.",
          inputSchema: Schema.Struct({ limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 10)), { default: () => 5 }) }),
          outputSchema: Schema.Array(Schema.Struct({ day: Schema.Date, total: Schema.Number })),
          query: () => []
        },
        health: { tags: ["misc"], summary: "Health", description: "Up?", auth: null, query: () => "ok" },
        limited: { tags: ["misc"], summary: "Limited", description: "Limited.", middlewares: [rateLimit()], cacheTtlMs: 0, query: () => 1 },
        create: {
          tags: ["misc"],
          summary: "Create",
          description: "Create.",
          method: "POST",
          inputSchema: z.object({ name: z.string(), size: z.number().int().default(1) }),
          outputSchema: z.object({ id: z.string() }),
          query: () => ({ id: "1" })
        }
      }
    })
    const findings = await lint(await documentText(api))
    console.log(`[lint] every-feature document: ${findings.map((f) => `${f.linter} ${f.severity} ${f.rule} at ${f.where || "/"}`).join("; ") || "clean"}`)
    expect(findings).toEqual([])
  }, 60_000)
})
