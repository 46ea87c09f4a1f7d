/**
 * Days the demo's inputs refuse because some engine cannot hold them: Postgres has no year 0, and
 * ClickHouse's Date holds 1970-01-01 to 2149-06-06, saturating anything outside to those ends.
 */
import { expect, it } from "vitest"
import { TENANT_KEYS, type CrossCheck } from "./crossCheck.js"
import { callApi } from "./http.js"

export const DAYS_NO_ENGINE_SHARES = ["0000-01-01", "0000-02-29", "0001-01-01", "1969-12-31", "2149-01-01", "2149-06-07", "9999-12-31"]

interface ValidationError {
  readonly error: { readonly type: string; readonly details: { readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly message: string }> } }
}

/** A 400 naming `from` and `to` for each day outside 1970 to 2148; a 200 as over DuckDB at both ends of that range. */
export const itRefusesDaysSomeEngineCannotHold = (check: () => CrossCheck): void => {
  it("answers 400 naming the years every engine holds for a day outside them", async () => {
    for (const day of DAYS_NO_ENGINE_SHARES) {
      const answer = await callApi(check().api.baseUrl, "revenueByRegion", { key: TENANT_KEYS.acme, input: { from: day, to: day } })
      expect(answer.status, `${day}: ${answer.text}`).toBe(400)
      expect((answer.json as ValidationError).error.details.issues).toEqual([
        { path: ["from"], message: `expected a year from 1970 to 2148, got "${day}"` },
        { path: ["to"], message: `expected a year from 1970 to 2148, got "${day}"` }
      ])
    }
  })

  it("answers the first and last days of 1970 to 2148 as over DuckDB", async () => {
    const options = { key: TENANT_KEYS.acme, input: { from: "1970-01-01", to: "2148-12-31" } }
    const [answer, duckDbAnswer] = await Promise.all([
      callApi(check().api.baseUrl, "cohortRetention", options),
      callApi(check().duckDbApi.baseUrl, "cohortRetention", options)
    ])
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toEqual(duckDbAnswer.json)
    expect((answer.json as Array<unknown>).length).toBeGreaterThan(0)
  })
}
