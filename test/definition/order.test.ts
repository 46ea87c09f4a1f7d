import { Schema } from "effect"
import { defineServe, type ServeMiddleware } from "queryserve"
import { describe, expect, it } from "vitest"

/** Each stage appends its name; a failing stage shows which later stages never ran. */
const makeTracedApi = (steps: Array<string>, outcome: { roles?: Array<string>; scopes?: Array<string>; tenant?: string }) => {
  const traced = (name: string): ServeMiddleware => (_ctx, next) => {
    steps.push(name)
    return next()
  }
  const input = Schema.Struct({
    n: Schema.String.pipe(Schema.filter((value) => {
      steps.push("validation")
      return value !== "bad"
    }))
  })
  return defineServe({
    auth: async () => {
      steps.push("authentication")
      return { roles: outcome.roles ?? [], scopes: outcome.scopes ?? [], tenant: outcome.tenant }
    },
    tenant: {
      extract: (auth) => {
        steps.push("tenant")
        return (auth as { tenant?: string } | null)?.tenant
      }
    },
    middlewares: [traced("global middleware 1"), traced("global middleware 2")],
    queries: {
      ordered: {
        inputSchema: input,
        requiredRoles: ["analyst", "admin"],
        requiredScopes: ["read", "export"],
        middlewares: [traced("endpoint middleware")],
        query: () => {
          steps.push("handler")
          return "ok"
        }
      }
    }
  })
}

const request = (n: string) => ({ method: "GET", path: "/api/analytics/ordered", query: { n } })

describe("processing order", () => {
  it("authentication → guards → tenant → validation → global then endpoint middlewares → handler", async () => {
    const steps: Array<string> = []
    const api = makeTracedApi(steps, { roles: ["admin"], scopes: ["read", "export"], tenant: "acme" })
    const response = await api.handler(request("fine"))
    expect(response.status).toBe(200)
    expect(steps).toEqual([
      "authentication",
      "tenant",
      "validation",
      "global middleware 1",
      "global middleware 2",
      "endpoint middleware",
      "handler"
    ])
  })

  it("a role failure (OR over roles) stops before tenant, validation and middlewares", async () => {
    const steps: Array<string> = []
    const response = await makeTracedApi(steps, { roles: ["viewer"], scopes: ["read", "export"], tenant: "acme" }).handler(request("bad"))
    expect(response.status).toBe(403)
    expect(JSON.parse(response.body!).error.details).toEqual({ reason: "missing_role", required: ["analyst", "admin"] })
    expect(steps).toEqual(["authentication"])
  })

  it("roles are checked before scopes, and scopes need all (AND)", async () => {
    const steps: Array<string> = []
    const response = await makeTracedApi(steps, { roles: ["analyst"], scopes: ["read"], tenant: "acme" }).handler(request("bad"))
    expect(response.status).toBe(403)
    expect(JSON.parse(response.body!).error.details).toEqual({ reason: "missing_scope", required: ["read", "export"] })
    expect(steps).toEqual(["authentication"])
  })

  it("a missing tenant stops before validation", async () => {
    const steps: Array<string> = []
    const response = await makeTracedApi(steps, { roles: ["admin"], scopes: ["read", "export"] }).handler(request("bad"))
    expect(response.status).toBe(403)
    expect(JSON.parse(response.body!).error.details).toEqual({ reason: "missing_tenant" })
    expect(steps).toEqual(["authentication", "tenant"])
  })

  it("invalid input stops before the middlewares", async () => {
    const steps: Array<string> = []
    const response = await makeTracedApi(steps, { roles: ["admin"], scopes: ["read", "export"], tenant: "acme" }).handler(request("bad"))
    expect(response.status).toBe(400)
    expect(steps).toEqual(["authentication", "tenant", "validation"])
  })
})
